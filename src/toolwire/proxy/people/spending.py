"""What the ledger answers: spend grouped by person, team, model or day, and the last
requests, fast over millions of rows.

A trigger on the ledger adds each row to ``toolwire_ledger_days``, one row per UTC day,
user, team, model and outcome (served or refused) holding the request count, the four
token counts and the cost: a month of a team of fifty on four models is a few thousand
rows, whatever the traffic. The database keeps it, so rows written by any writer (an
older replica during an upgrade, an operator's import) are counted. A question reads
the days that lie wholly after ``since`` from there, and only the part of a day before
them from the ledger itself, through its index on ``at``; the two are added up here.
The schema step that adds the table fills it from the rows already in the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DAY = 86400
DAYS = "toolwire_ledger_days"
PEOPLE_DAYS = "toolwire_ledger_people_days"
GROUPS = ("user", "team", "model", "day")
_SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost")
_KEY = ("day", "user", "team", "model", "refused")
# Each day table and its key: the one without the model is a sixth of the size with six
# models, and answers every question that neither groups by nor names a model.
ROLLUPS = {DAYS: _KEY, PEOPLE_DAYS: ("day", "user", "team", "refused")}
_TEXT = ("user", "team", "model")


def _q(name: str) -> str:
    return f'"{name}"'


@dataclass(frozen=True, slots=True)
class Engine:
    """What differs between SQLite and PostgreSQL: the placeholder, ``at``'s day, and
    how a trigger is written around its one statement."""

    mark: str
    day_of_at: str
    trigger: tuple[str, ...]


SQLITE = Engine("?", "CAST(at / 86400 AS INTEGER)", (
    "CREATE TRIGGER IF NOT EXISTS toolwire_ledger_day AFTER INSERT ON toolwire_ledger "
    "BEGIN {upsert}; END",
))  # fmt: skip
POSTGRES = Engine("%s", "CAST(FLOOR(at / 86400) AS BIGINT)", (
    "CREATE OR REPLACE FUNCTION toolwire_ledger_day() RETURNS trigger AS $$ BEGIN {upsert}; "
    "RETURN NULL; END $$ LANGUAGE plpgsql",
    "CREATE OR REPLACE TRIGGER toolwire_ledger_day AFTER INSERT ON toolwire_ledger "
    "FOR EACH ROW EXECUTE FUNCTION toolwire_ledger_day()",
))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Spend:
    """One group's totals: ``key`` is its values of the grouping (a day as 2026-11-29)."""

    key: tuple[str, ...]
    served: int
    refused: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float

    def totals(self) -> tuple[int, int, int, int, int, int, float]:
        """Everything but the key, in field order."""
        return (self.served, self.refused, self.input_tokens, self.output_tokens,
                self.cache_read_tokens, self.cache_write_tokens, self.cost)  # fmt: skip

    def to_json(self, by: Sequence[str]) -> dict[str, Any]:
        data: dict[str, Any] = dict(zip(by, self.key, strict=True))
        data.update(zip(_FIELDS, self.totals(), strict=True))
        return data


_FIELDS = ("served", "refused", *_SUMS)


def tables(engine: Engine) -> list[str]:
    """The day tables, the index on ``at`` and the trigger (each made only if missing:
    the first schema step runs at every start)."""
    made = []
    for table, key in ROLLUPS.items():
        columns = ", ".join(f"{_q(c)} {'TEXT' if c in _TEXT else 'BIGINT'} NOT NULL"
                            for c in (*key, "requests", *_SUMS[:-1]))  # fmt: skip
        made.append(f"CREATE TABLE IF NOT EXISTS {table} ({columns}, cost DOUBLE PRECISION "
                    f"NOT NULL, PRIMARY KEY ({', '.join(_q(c) for c in key)}))")  # fmt: skip
    upserts = "; ".join(_upsert(engine, table, key) for table, key in ROLLUPS.items())
    return [
        *made,
        "CREATE INDEX IF NOT EXISTS toolwire_ledger_at ON toolwire_ledger (at)",
        *(t.format(upsert=upserts) for t in engine.trigger),
    ]


def backfill(engine: Engine) -> list[str]:
    """The step that fills the day tables from rows written before they existed."""
    sums = ", ".join(f"SUM({c})" for c in _SUMS)
    refused = "CASE WHEN status = 'refused' THEN 1 ELSE 0 END"
    found = []
    for table, key in ROLLUPS.items():
        picked = [engine.day_of_at if c == "day" else refused if c == "refused" else _q(c)
                  for c in key]  # fmt: skip
        found += [
            f"DELETE FROM {table}",
            f"INSERT INTO {table} ({', '.join(_q(c) for c in key)}, requests, "
            f"{', '.join(_SUMS)}) SELECT {', '.join(picked)}, COUNT(*), {sums} "
            f"FROM toolwire_ledger GROUP BY {', '.join(picked)}",
        ]
    return found


def _upsert(engine: Engine, table: str, key: tuple[str, ...]) -> str:
    """One new ledger row (``NEW``) added to its day in ``table``."""
    new = {"day": engine.day_of_at.replace("at", "NEW.at"), "user": 'NEW."user"',
           "refused": "CASE WHEN NEW.status = 'refused' THEN 1 ELSE 0 END"}  # fmt: skip
    values = [new.get(c, f"NEW.{c}") for c in key] + ["1"] + [f"NEW.{c}" for c in _SUMS]
    names = ("requests", *_SUMS)
    columns = ", ".join(_q(c) for c in (*key, *names))
    added = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in names)
    return (f"INSERT INTO {table} ({columns}) VALUES ({', '.join(values)}) "
            f"ON CONFLICT ({', '.join(_q(c) for c in key)}) DO UPDATE SET {added}")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Question:
    """Spend grouped ``by`` some of ``GROUPS``, for whom and since when."""

    by: tuple[str, ...] = ("user", "team")
    user: str | None = None
    team: str | None = None
    model: str | None = None
    since: float | None = None

    def check(self) -> Question:
        wrong = [b for b in self.by if b not in GROUPS]
        if wrong or not self.by:
            raise ValueError(f"group by {', '.join(GROUPS)} (not {', '.join(wrong) or 'nothing'})")
        return self


def queries(engine: Engine, question: Question) -> list[tuple[str, list[Any]]]:
    """The statements answering ``question``: the whole days from the day table, the
    part of a day before them from the ledger (``since`` inside a day)."""
    first = None if question.since is None else -(-int(question.since) // DAY)
    table = DAYS if "model" in question.by or question.model is not None else PEOPLE_DAYS
    days = _grouped(engine, question, table, "day", "requests", "refused = 1")
    days_where = [] if first is None else [(f"day >= {engine.mark}", first)]
    found = [_where(engine, days, question, days_where)]
    if question.since is not None and first is not None and question.since < first * DAY:
        raw = _grouped(engine, question, "toolwire_ledger", engine.day_of_at, "1",
                       "status = 'refused'")  # fmt: skip
        bounds = [(f"at >= {engine.mark}", question.since), (f"at < {engine.mark}", first * DAY)]
        found.append(_where(engine, raw, question, bounds))
    return found


def _grouped(
    engine: Engine, question: Question, table: str, day: str, count: str, refused: str
) -> tuple[str, str]:
    keys = ", ".join(day if b == "day" else _q(b) for b in question.by)
    served = f"SUM(CASE WHEN {refused} THEN 0 ELSE {count} END)"
    refusals = f"SUM(CASE WHEN {refused} THEN {count} ELSE 0 END)"
    sums = ", ".join(f"SUM({c})" for c in _SUMS)
    return f"SELECT {keys}, {served}, {refusals}, {sums} FROM {table}", f" GROUP BY {keys}"


def _where(
    engine: Engine, parts: tuple[str, str], question: Question, extra: list[tuple[str, Any]]
) -> tuple[str, list[Any]]:
    named = [c for c in ("user", "team", "model") if getattr(question, c) is not None]
    conditions = [(f"{_q(c)} = {engine.mark}", getattr(question, c)) for c in named]
    conditions += extra
    where = " WHERE " + " AND ".join(c for c, _ in conditions) if conditions else ""
    return parts[0] + where + parts[1], [v for _, v in conditions]


def merged(question: Question, results: Iterable[Sequence[Any]]) -> list[Spend]:
    """The groups of every query's rows added up, largest cost first."""
    width = len(question.by)
    totals: dict[tuple[str, ...], list[Any]] = {}
    shown: dict[tuple[str, Any], str] = {}  # a day's text made once, not per row
    for row in results:
        key = tuple(
            shown.get((b, v)) or shown.setdefault((b, v), _shown(b, v))
            for b, v in zip(question.by, row[:width], strict=True)
        )
        values = totals.setdefault(key, [0, 0, 0, 0, 0, 0, 0.0])
        for i, value in enumerate(row[width:]):
            values[i] += value or 0
    found = [_spend(k, vs) for k, vs in totals.items()]
    return sorted(found, key=lambda s: (-s.cost, s.key))


def regrouped(found: Iterable[Spend], keep: Sequence[int]) -> list[Spend]:
    """``found`` added up again by the key parts at ``keep`` (one question, many views)."""
    totals: dict[tuple[str, ...], list[Any]] = {}
    for s in found:
        values = totals.setdefault(tuple(s.key[i] for i in keep), [0, 0, 0, 0, 0, 0, 0.0])
        for i, value in enumerate(s.totals()):
            values[i] += value
    return sorted((_spend(k, v) for k, v in totals.items()), key=lambda s: (-s.cost, s.key))


def _spend(key: tuple[str, ...], v: list[Any]) -> Spend:
    return Spend(key, int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5]), float(v[6]))


def _shown(group: str, value: Any) -> str:
    if group == "day":
        return datetime.fromtimestamp(int(value) * DAY, UTC).strftime("%Y-%m-%d")
    return str(value)


__all__ = [
    "DAYS",
    "GROUPS",
    "PEOPLE_DAYS",
    "POSTGRES",
    "SQLITE",
    "Engine",
    "Question",
    "Spend",
    "backfill",
    "merged",
    "queries",
    "regrouped",
    "tables",
]

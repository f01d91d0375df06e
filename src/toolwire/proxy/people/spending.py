"""What the ledger answers: spend grouped by person, team, model or day, and the last
requests, fast over millions of rows.

Every write also adds its rows to ``toolwire_ledger_days``, one row per UTC day, user,
team, model and outcome (served or refused) holding the request count, the four token
counts and the cost: a month of a team of fifty on four models is a few thousand rows,
whatever the traffic. A question reads the days that lie wholly after ``since`` from
there, and only the part of a day before them from the ledger itself, through its
index on ``at``; the two are added up here. The schema step that makes the table fills
it from the rows already in the ledger (``steps``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from typing import Any

DAY = 86400
DAYS = "toolwire_ledger_days"
GROUPS = ("user", "team", "model", "day")
_SUMS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost")
_KEY = ("day", "user", "team", "model", "refused")
_TEXT = ("user", "team", "model")


def _q(name: str) -> str:
    return f'"{name}"'


@dataclass(frozen=True, slots=True)
class Engine:
    """What differs between SQLite and PostgreSQL: the placeholder and ``at``'s day."""

    mark: str
    day_of_at: str


SQLITE = Engine("?", "CAST(at / 86400 AS INTEGER)")
POSTGRES = Engine("%s", "CAST(FLOOR(at / 86400) AS BIGINT)")


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

    def to_json(self, by: Sequence[str]) -> dict[str, Any]:
        data: dict[str, Any] = dict(zip(by, self.key, strict=True))
        data.update(zip(_FIELDS, astuple(self)[1:], strict=True))
        return data


_FIELDS = ("served", "refused", *_SUMS)


def steps(engine: Engine) -> list[str]:
    """The schema step that adds the day table and the index on ``at``, filled from the
    rows already written."""
    columns = ", ".join(
        f"{_q(c)} {'TEXT' if c in _TEXT else 'BIGINT'} NOT NULL"
        for c in (*_KEY, "requests", *_SUMS[:-1])
    )
    key = ", ".join(_q(c) for c in _KEY)
    sums = ", ".join(f"SUM({c})" for c in _SUMS)
    refused = "CASE WHEN status = 'refused' THEN 1 ELSE 0 END"
    return [
        f"CREATE TABLE IF NOT EXISTS {DAYS} ({columns}, cost DOUBLE PRECISION NOT NULL, "
        f"PRIMARY KEY ({key}))",
        "CREATE INDEX IF NOT EXISTS toolwire_ledger_at ON toolwire_ledger (at)",
        f"INSERT INTO {DAYS} ({key}, requests, {', '.join(_SUMS)}) "
        f'SELECT {engine.day_of_at}, "user", team, model, {refused}, COUNT(*), {sums} '
        f'FROM toolwire_ledger GROUP BY {engine.day_of_at}, "user", team, model, {refused}',
    ]


def day_rows(rows: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Ledger rows added up per key of the day table, as its upsert's parameters."""
    found: dict[tuple[Any, ...], list[Any]] = {}
    for r in rows:
        key = (int(r.at // DAY), r.user, r.team, r.model, int(r.status == "refused"))
        totals = found.setdefault(key, [0, 0, 0, 0, 0, 0.0])
        for i, value in enumerate((1, *(getattr(r, c) for c in _SUMS))):
            totals[i] += value
    return [(*key, *totals) for key, totals in found.items()]


def upsert(engine: Engine) -> str:
    """The statement that adds ``day_rows`` to the day table."""
    names = ("requests", *_SUMS)
    columns = ", ".join(_q(c) for c in (*_KEY, *names))
    marks = ", ".join(engine.mark for _ in (*_KEY, *names))
    added = ", ".join(f"{c} = {DAYS}.{c} + excluded.{c}" for c in names)
    key = ", ".join(_q(c) for c in _KEY)
    return (
        f"INSERT INTO {DAYS} ({columns}) VALUES ({marks}) ON CONFLICT ({key}) DO UPDATE SET {added}"
    )


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
    days = _grouped(engine, question, DAYS, "day", "requests", "refused = 1")
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
    for row in results:
        key = tuple(_shown(b, v) for b, v in zip(question.by, row[:width], strict=True))
        values = totals.setdefault(key, [0, 0, 0, 0, 0, 0, 0.0])
        for i, value in enumerate(row[width:]):
            values[i] += value or 0
    found = [_spend(k, vs) for k, vs in totals.items()]
    return sorted(found, key=lambda s: (-s.cost, s.key))


def _spend(key: tuple[str, ...], v: list[Any]) -> Spend:
    return Spend(key, int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), int(v[5]), float(v[6]))


def _shown(group: str, value: Any) -> str:
    if group == "day":
        return datetime.fromtimestamp(int(value) * DAY, UTC).strftime("%Y-%m-%d")
    return str(value)


__all__ = [
    "DAYS",
    "GROUPS",
    "POSTGRES",
    "SQLITE",
    "Engine",
    "Question",
    "Spend",
    "day_rows",
    "merged",
    "queries",
    "steps",
    "upsert",
]

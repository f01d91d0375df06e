"""The ledger's questions on SQLite and PostgreSQL: spend per user, team, model and day,
from the per-day table and the part of a day before it, equal to adding up the rows;
a ledger written before the day table existed is counted once it is opened."""

from __future__ import annotations

import random
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.pg import postgres_server, postgres_url  # noqa: F401 (fixtures)
from toolwire.proxy.people.ledger import Ledger, LedgerRow, open_ledger
from toolwire.proxy.people.spending import Question

DAY = 86400


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.e2e)])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Ledger]:
    if request.param == "sqlite":
        spec = str(tmp_path / "spend.db")
    else:
        spec = request.getfixturevalue("postgres_url")
    return lambda: open_ledger(spec)


def _rows(count: int, now: float) -> list[LedgerRow]:
    rng = random.Random(3)
    people = (("alice", "eng"), ("bob", "eng"), ("carol", "ops"), ("", ""))
    return [LedgerRow(now - rng.uniform(0, 40 * DAY), *rng.choice(people), "s", "b",
                      rng.choice(("m1", "m2", "m3")), rng.randint(0, 999), rng.randint(0, 99),
                      rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 10_000) / 1e4,
                      rng.choice(("ok", "ok", "cut", "refused", "error 500")))
            for _ in range(count)]  # fmt: skip


def _expected(rows: list[LedgerRow], q: Question) -> dict[tuple[str, ...], list[Any]]:
    totals: dict[tuple[str, ...], list[Any]] = defaultdict(lambda: [0, 0, 0, 0.0])
    for r in rows:
        if q.since is not None and r.at < q.since:
            continue
        if any(getattr(q, c) is not None and getattr(r, c) != getattr(q, c)
               for c in ("user", "team", "model")):  # fmt: skip
            continue
        day = time.strftime("%Y-%m-%d", time.gmtime(int(r.at // DAY) * DAY))
        key = tuple(day if b == "day" else getattr(r, b) for b in q.by)
        t = totals[key]
        t[0 if r.status != "refused" else 1] += 1
        t[2] += r.input_tokens
        t[3] += r.cost
    return dict(totals)


QUESTIONS = [
    Question(("user", "team")),
    Question(("model",), user="alice"),
    Question(("day",), since=1.0),  # replaced by a time inside a day below
    Question(("user", "model"), team="eng", since=1.0),
    Question(("day", "team")),
]


def test_every_grouping_equals_adding_up_the_rows(opener: Callable[[], Ledger]) -> None:
    now = time.time()
    rows = _rows(3000, now)
    ledger = opener()
    try:
        for start in range(0, len(rows), 500):
            ledger.write(rows[start : start + 500])
        for question in QUESTIONS:
            if question.since is not None:  # 12.3 days ago: the middle of a day
                question = Question(question.by, question.user, question.team, question.model,
                                    now - 12.3 * DAY)  # fmt: skip
            found = {s.key: [s.served, s.refused, s.input_tokens, s.cost]
                     for s in ledger.spend(question)}  # fmt: skip
            expected = _expected(rows, question)
            assert found.keys() == expected.keys(), question
            for key, values in expected.items():
                assert found[key][:3] == values[:3], (question, key)
                assert found[key][3] == pytest.approx(values[3]), (question, key)
        recent = ledger.recent(5)
        assert [r.at for r in recent] == sorted((r.at for r in rows), reverse=True)[:5]
    finally:
        ledger.close()


def test_a_ledger_from_before_the_day_table_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    rows = _rows(400, time.time())
    names = list(LedgerRow.__dataclass_fields__)
    text = ("user", "team", "session", "backend", "model", "status")
    kinds = {c: "DOUBLE PRECISION" if c in ("at", "cost") else "TEXT" if c in text else "BIGINT"
             for c in names}  # fmt: skip
    with sqlite3.connect(path) as db:  # what the previous version made and wrote
        columns = ", ".join(f'"{c}" {kinds[c]} NOT NULL' for c in names)
        db.execute(f"CREATE TABLE toolwire_ledger ({columns})")
        db.execute("CREATE TABLE toolwire_schema (component TEXT PRIMARY KEY, version INTEGER)")
        db.execute("INSERT INTO toolwire_schema VALUES ('ledger', 1)")
        marks = ", ".join("?" for _ in names)
        values = [tuple(getattr(r, c) for c in names) for r in rows]
        db.executemany(f"INSERT INTO toolwire_ledger VALUES ({marks})", values)
    for _ in range(2):  # opened twice: the rows are counted once
        ledger = open_ledger(str(path))
        question = Question(("user",))
        found = {s.key: s.served + s.refused for s in ledger.spend(question)}
        ledger.close()
        assert found == {k: v[0] + v[1] for k, v in _expected(rows, question).items()}

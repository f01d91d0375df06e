"""Benchmark: the team's page, ``toolwire proxy spend`` and the admin API over a ledger
of 1,000,000 rows, on SQLite and on PostgreSQL (a throwaway cluster, as the tests make).

The rows: 90 days, 100 people in 12 teams, 6 models, one in ten refused, loaded in bulk
(the trigger off, the per-day table filled by the schema's backfill; ``write`` then
measures the ledger's own batched writes, trigger on). Then a real ``toolwire proxy`` (uvicorn,
in this process) serves on that ledger, with 100 keys and their budgets in a SQLite
store, and each question is asked ``--repeat`` times over HTTP with the admin token
(``spend``: the command itself, in process). The table gives the median and the
slowest; the target is under 1 s each. ``raw GROUP BY`` is the same question as
``spend`` asked of the ledger table alone, what answering cost before the per-day table.

    python bench/ledger.py [--rows 1000000] [--engines sqlite,postgres] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import astuple
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from toolwire.cli._app import app as cli  # noqa: E402
from toolwire.proxy import create_app, load_settings  # noqa: E402
from toolwire.proxy.people.accounts import SQLiteAccounts, issue  # noqa: E402
from toolwire.proxy.people.keys import parse_budget  # noqa: E402
from toolwire.proxy.people.ledger import COLUMNS, LedgerRow, open_ledger  # noqa: E402
from toolwire.proxy.people.spending import POSTGRES, SQLITE, backfill  # noqa: E402

ADMIN = "bench-admin-token"
DAY = 86400


def rows(count: int, now: float) -> Iterator[LedgerRow]:
    rng = random.Random(1)
    people = [(f"user{n:03d}", f"team{n % 12:02d}") for n in range(100)]
    models = ["glm-4.6", "claude-sonnet", "qwen3", "gpt-5", "gemini-3", "kimi"]
    for _ in range(count):
        user, team = rng.choice(people)
        refused = rng.random() < 0.1
        yield LedgerRow(now - rng.uniform(0, 90 * DAY), user, team, "s", "b",
                        rng.choice(models), rng.randint(100, 50_000), rng.randint(10, 4_000),
                        rng.randint(0, 20_000), rng.randint(0, 2_000),
                        0.0 if refused else rng.uniform(0.0001, 0.5),
                        "refused" if refused else "ok")  # fmt: skip


def fill(spec: str, count: int) -> float:
    """Seconds to load ``count`` rows into the ledger ``spec`` in bulk: the trigger is
    dropped meanwhile and the per-day table filled by the schema's backfill, as an
    upgrade from a ledger without it does (the trigger's cost per row is ``write``'s)."""
    started, now = time.perf_counter(), time.time()
    open_ledger(spec).close()  # the schema, the trigger included
    engine = POSTGRES if spec.startswith("postgresql://") else SQLITE
    values = (astuple(row) for row in rows(count, now))
    if engine is POSTGRES:
        import psycopg

        names = ", ".join(f'"{c}"' for c in COLUMNS)
        with psycopg.connect(spec) as db, db.cursor() as cur:
            cur.execute("DROP TRIGGER toolwire_ledger_day ON toolwire_ledger")
            with cur.copy(f"COPY toolwire_ledger ({names}) FROM STDIN") as copy:
                for value in values:
                    copy.write_row(value)
            for statement in backfill(engine):
                cur.execute(statement)
            db.commit()
            db.execute("ANALYZE")
    else:
        import sqlite3

        with sqlite3.connect(spec) as lite:
            lite.execute("DROP TRIGGER toolwire_ledger_day")
            marks = ", ".join("?" for _ in COLUMNS)
            lite.executemany(f"INSERT INTO toolwire_ledger VALUES ({marks})", values)
            for statement in backfill(engine):
                lite.execute(statement)
    open_ledger(spec).close()  # the trigger is back
    return time.perf_counter() - started


def write_rate(spec: str, count: int = 20_000) -> float:
    """Rows per second the ledger's own ``write`` takes, trigger included."""
    batch = list(rows(count, time.time()))
    ledger = open_ledger(spec)
    started = time.perf_counter()
    for start in range(0, count, 500):  # the writer thread's batches
        ledger.write(batch[start : start + 500])
    ledger.close()
    return count / (time.perf_counter() - started)


def timed(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000, max(took) * 1000


def config(tmp: Path, ledger: str) -> Path:
    path = tmp / "config.toml"
    path.write_text(f"""
default_backend = "glm"
[backends.glm]
provider = "anthropic"
base_url = "http://127.0.0.1:9"
model = "glm-4.6"
[proxy]
store = "{tmp / "store.db"}"
ledger = "{ledger}"
admin_token_env = "BENCH_ADMIN_TOKEN"
""")
    accounts = SQLiteAccounts(tmp / "store.db")
    for n in range(100):
        issue(accounts, f"user{n:03d}", team=f"team{n % 12:02d}", budget="50usd/30d")
    for t in range(12):
        accounts.set_budget(f"team:team{t:02d}", parse_budget("500usd/30d", time.time()))
    return path


def measure(engine: str, spec: str, tmp: Path, count: int, repeat: int) -> list[tuple[str, ...]]:
    wrote = fill(spec, count)
    os.environ["BENCH_ADMIN_TOKEN"] = ADMIN
    path = config(tmp, spec)
    settings = load_settings(path)
    from tests.proxy.support import serving

    results: list[tuple[str, ...]] = [
        (engine, f"load {count:,} rows in bulk", f"{wrote:.1f} s", ""),
        (engine, "write (batches of 500, trigger)", f"{write_rate(spec):,.0f} rows/s", ""),
    ]
    head = {"authorization": f"Bearer {ADMIN}"}
    asks: list[tuple[str, Callable[[], object]]] = []
    with serving(create_app(settings), settings, lifespan="on") as url:

        def get(path: str) -> Callable[[], object]:
            def ask() -> object:
                answer = httpx2.get(url + path, headers=head, timeout=60)
                assert answer.status_code == 200, answer.text[:200]
                return answer

            return ask

        def spend(*extra: str) -> Callable[[], object]:
            return lambda: CliRunner().invoke(
                cli, ["proxy", "spend", *extra, "--config", str(path)]
            )

        asks = [
            ("GET /ui", get("/ui")),
            ("spend (the command)", spend()),
            ("spend --since 7d", spend("--since", "7d")),
        ]
        for question in ("by=user,team", "by=model,day&since=30d", "by=day&user=user007&since=12h"):
            asks.append((f"GET /admin/spend?{question}", get(f"/admin/spend?{question}")))
        asks += [("GET /admin/keys", get("/admin/keys")),
                 ("GET /admin/budgets?team=team03", get("/admin/budgets?team=team03"))]  # fmt: skip
        for name, ask in asks:
            median, worst = timed(ask, repeat)
            results.append((engine, name, f"{median:.0f} ms", f"{worst:.0f} ms"))
    results.append((engine, "raw GROUP BY user, team (no day table)",
                    *(f"{v:.0f} ms" for v in timed(lambda: raw(spec), 1))))  # fmt: skip
    return results


def raw(spec: str) -> object:
    query = ('SELECT "user", team, COUNT(*), SUM(input_tokens), SUM(cost) FROM toolwire_ledger '
             'GROUP BY "user", team')  # fmt: skip
    if spec.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(spec) as db:
            return db.execute(query).fetchall()
    import sqlite3

    with sqlite3.connect(spec) as db:
        return db.execute(query).fetchall()


@contextmanager
def postgres() -> Iterator[str | None]:
    import pytest
    from tests.proxy.pg import cluster

    try:
        with cluster() as running:
            yield running.url
    except pytest.skip.Exception as e:
        print(f"PostgreSQL skipped: {e}", file=sys.stderr)
        yield None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table: list[tuple[str, ...]] = []
    for engine in args.engines.split(","):
        with tempfile.TemporaryDirectory(prefix="toolwire-ledger-bench-") as tmp:
            if engine == "sqlite":
                table += measure(
                    engine, str(Path(tmp) / "spend.db"), Path(tmp), args.rows, args.repeat
                )
            else:
                with postgres() as url:
                    if url is not None:
                        table += measure(engine, url, Path(tmp), args.rows, args.repeat)
    print("| engine | question | median | slowest |\n|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

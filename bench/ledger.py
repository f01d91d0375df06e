"""Benchmark: the team's page, ``toolwire proxy spend`` and the admin API over a ledger
of 1,000,000 rows, on SQLite and on PostgreSQL (a throwaway cluster, as the tests make).

The rows: 90 days, 100 people in 12 teams, 6 models, one in ten refused. SQLite gets
them through the ledger's own ``write`` (its trigger keeps the per-day table), PostgreSQL
through ``COPY`` (the trigger fires for it too). Then a real ``toolwire proxy`` (uvicorn,
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
    """Seconds to write ``count`` rows into the ledger ``spec``."""
    started, now = time.perf_counter(), time.time()
    ledger = open_ledger(spec)
    ledger.close()
    if spec.startswith("postgresql://"):
        import psycopg

        names = ", ".join(f'"{c}"' for c in COLUMNS)
        with psycopg.connect(spec) as db, db.cursor() as cur:
            with cur.copy(f"COPY toolwire_ledger ({names}) FROM STDIN") as copy:
                for row in rows(count, now):
                    copy.write_row(astuple(row))
            db.execute("ANALYZE")
    else:
        ledger = open_ledger(spec)
        batch: list[LedgerRow] = []
        for row in rows(count, now):
            batch.append(row)
            if len(batch) == 50_000:
                ledger.write(batch)
                batch = []
        ledger.write(batch)
        ledger.close()
    return time.perf_counter() - started


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

    results = [(engine, f"write {count:,} rows", f"{wrote:.1f} s", "")]
    head = {"authorization": f"Bearer {ADMIN}"}
    asks: list[tuple[str, Callable[[], object]]] = []
    with serving(create_app(settings), settings, lifespan="on") as url:

        def get(path: str) -> Callable[[], object]:
            def ask() -> object:
                answer = httpx2.get(url + path, headers=head, timeout=60)
                assert answer.status_code == 200, answer.text[:200]
                return answer

            return ask

        asks = [
            ("GET /ui", get("/ui")),
            ("spend (the command)", lambda: CliRunner().invoke(cli, ["proxy", "spend", "--config", str(path)])),
            ("spend --since 7d", lambda: CliRunner().invoke(cli, ["proxy", "spend", "--since", "7d", "--config", str(path)])),
            ("GET /admin/spend?by=user,team", get("/admin/spend?by=user,team")),
            ("GET /admin/spend?by=model,day&since=30d", get("/admin/spend?by=model,day&since=30d")),
            ("GET /admin/spend?by=day&user=user007&since=12h", get("/admin/spend?by=day&user=user007&since=12h")),
            ("GET /admin/keys", get("/admin/keys")),
            ("GET /admin/budgets?team=team03", get("/admin/budgets?team=team03")),
        ]  # fmt: skip
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
                table += measure(engine, str(Path(tmp) / "spend.db"), Path(tmp), args.rows, args.repeat)
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

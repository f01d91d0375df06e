"""Replicas that start at the same moment on one database: every one comes up and serves
(the schema is created once, under a lock, and its version recorded)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
import redis

from tests.fakes.http import FakeServer
from tests.proxy.people_support import answering, priced_config, replicas, wait_for
from tests.proxy.pg import DROP_LEDGER, postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.proxy.support import request_body
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)
from toolwire.proxy.people import open_accounts, open_ledger
from toolwire.proxy.shared import open_shared
from toolwire.proxy.stores import open_store
from toolwire.proxy.stores.schema import (
    REDIS_GUARD,
    REDIS_SCHEMA,
    postgres_schema,
    redis_schema,
    sqlite_schema,
)

TOGETHER = 8  # openers released at once by a barrier


def _at_once(open_one: Callable[[], Any]) -> list[str]:
    """``open_one`` run by ``TOGETHER`` threads released together; the errors they met."""
    barrier = threading.Barrier(TOGETHER)
    errors: list[str] = []

    def run() -> None:
        barrier.wait()
        try:
            opened = open_one()
        except Exception as e:
            errors.append(f"{type(e).__name__}: {e}")
            return
        for part in opened if isinstance(opened, tuple) else (opened,):
            if part is not None:
                part.close()

    threads = [threading.Thread(target=run) for _ in range(TOGETHER)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def _drop_all(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(DROP_LEDGER + ", toolwire_schema")


@pytest.mark.xdist_group("redis-server")
def test_ledgers_opened_at_once_on_an_empty_postgresql_all_open(
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    for _ in range(3):  # three fresh databases: the race is not won by luck
        _drop_all(postgres_url)
        assert _at_once(lambda: open_ledger(postgres_url)) == []
    with psycopg.connect(postgres_url) as db:
        versions = db.execute("SELECT component, version FROM toolwire_schema").fetchall()
    assert versions == [("ledger", 2)]  # 2: the per-day table (spending.py)


def test_stores_opened_at_once_on_an_empty_sqlite_file_all_open(tmp_path: Path) -> None:
    for n in range(3):
        path = str(tmp_path / f"store{n}.db")

        def everything(path: str = path) -> tuple[Any, ...]:
            shared: Any = open_shared(path)
            return open_store(path), open_accounts(path), shared, open_ledger(path)

        assert _at_once(everything) == []
    with sqlite3.connect(tmp_path / "store0.db") as db:
        versions = dict(db.execute("SELECT component, version FROM toolwire_schema").fetchall())
    assert versions == {"sessions": 1, "accounts": 1, "shared": 1, "ledger": 2}


@contextmanager
def _arriving_together(url: str, count: int) -> Iterator[None]:
    """``count`` replicas made to reach the ledger's creation at the same moment: an
    uncommitted ``CREATE TABLE toolwire_ledger`` holds every one that gets there, and is
    rolled back once ``count`` sessions wait on a lock (or after 30 s), releasing them."""
    holder = psycopg.connect(url)  # not autocommit: the CREATE stays uncommitted
    holder.execute("CREATE TABLE toolwire_ledger (held INTEGER)")
    waited: list[int] = []

    def release() -> None:
        deadline = time.monotonic() + 30
        with psycopg.connect(url, autocommit=True) as watch:
            while time.monotonic() < deadline:
                row = watch.execute(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                ).fetchone()
                if row is not None and int(row[0]) >= count:
                    waited.append(int(row[0]))
                    break
                time.sleep(0.05)
        holder.rollback()

    thread = threading.Thread(target=release)
    thread.start()
    try:
        yield
    finally:
        thread.join()
        holder.close()
    assert waited, f"the {count} replicas never waited together"


def _cli(config: Path, *args: str) -> list[str]:
    argv = [sys.executable, "-m", "toolwire", "proxy", *args, "--config", str(config)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.xdist_group("redis-server")
def test_four_replicas_started_at_once_on_one_postgresql_and_redis_all_serve(
    tmp_path: Path,
    redis_url: str,  # noqa: F811 (a fixture)
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    _drop_all(postgres_url)
    with FakeServer(respond=answering({"input_tokens": 3}, 2)) as upstream:
        extra = f'store = "{redis_url}"\nledger = "{postgres_url}"'
        config = priced_config(tmp_path, upstream.url, extra)
        key = _cli(config, "keys", "add", "--user", "alice")[-1]
        with _arriving_together(postgres_url, 4), replicas(config, 4) as urls:
            body = request_body([{"role": "user", "content": "hi"}], max_tokens=10)

            def ask(url: str) -> int:
                headers = {"x-api-key": key}
                return httpx2.post(f"{url}/v1/messages", json=body, headers=headers).status_code

            with ThreadPoolExecutor(4) as pool:
                assert list(pool.map(ask, urls)) == [200] * 4

            def rows() -> int:
                # The ledger opens off the request path (its writer retries with backoff),
                # so the table may come after the first answers.
                with psycopg.connect(postgres_url) as db:
                    try:
                        found = db.execute("SELECT COUNT(*) FROM toolwire_ledger").fetchone()
                    except psycopg.errors.UndefinedTable:
                        return 0
                return int(found[0]) if found else 0

            wait_for(lambda: rows() == 4, seconds=40)
    assert len(upstream.requests) == 4


PROBE = [
    ["CREATE TABLE IF NOT EXISTS toolwire_probe (a INTEGER)"],
    ["ALTER TABLE toolwire_probe ADD COLUMN b INTEGER"],  # fails if it ran twice
]


def test_an_upgrade_runs_once_however_many_sqlite_openers_race(tmp_path: Path) -> None:
    path = tmp_path / "probe.db"

    def upgrade() -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        sqlite_schema(db, "probe", PROBE)
        return db

    assert _at_once(upgrade) == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT a, b FROM toolwire_probe").fetchall() == []
        (version,) = db.execute("SELECT version FROM toolwire_schema").fetchone()
    assert version == 2


@pytest.mark.xdist_group("redis-server")
def test_an_upgrade_runs_once_however_many_postgresql_replicas_race(
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("DROP TABLE IF EXISTS toolwire_probe, toolwire_schema")

    def upgrade() -> Any:
        db = psycopg.connect(postgres_url, autocommit=True)
        postgres_schema(db, "probe", PROBE)
        return db

    assert _at_once(upgrade) == []
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT a, b FROM toolwire_probe").fetchall() == []
        row = db.execute("SELECT version FROM toolwire_schema WHERE component = 'probe'")
        assert row.fetchone() == (2,)
        db.execute("DROP TABLE toolwire_probe, toolwire_schema")


@pytest.mark.xdist_group("redis-server")
def test_a_redis_guard_left_by_a_dead_replica_expires_and_setup_runs_once(
    redis_url: str,  # noqa: F811 (a fixture)
) -> None:
    client = redis.Redis.from_url(redis_url)
    ran: list[int] = []
    # A replica that died holding the guard: its expiry frees the others.
    client.set(REDIS_GUARD, "a dead replica", ex=1)
    steps = [lambda c: ran.append(1), lambda c: ran.append(2)]
    started = time.monotonic()
    assert _at_once(lambda: redis_schema(redis.Redis.from_url(redis_url), "probe", steps)) == []
    assert time.monotonic() - started >= 0.5
    assert ran == [1, 2]
    assert client.hget(REDIS_SCHEMA, "probe") == b"2"
    assert client.get(REDIS_GUARD) is None
    client.close()

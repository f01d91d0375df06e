"""Budgets, revocation and the ledger across two real ``toolwire proxy`` processes on one
real ``redis-server`` (keys, budgets, counters) and one real PostgreSQL (the ledger), a
fake Anthropic upstream on 127.0.0.1, keys made with the real ``toolwire proxy keys``."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.cluster import redis_cluster, store_url  # noqa: F401 (fixtures)
from tests.proxy.people_support import answering, priced_config, replicas
from tests.proxy.pg import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.proxy.support import request_body
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)
from toolwire.proxy.people.accounts import open_accounts
from toolwire.proxy.people.keys import Budget

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("redis-server")]

# Only output is priced ($100 per million tokens): max_tokens 1,000 is a worst case of
# exactly $0.10, and the upstream reports the whole 1,000, so a request costs that too.
OUTPUT_ONLY = "{ input = 0.0, output = 100.0, cache_read = 0.0, cache_write = 0.0 }"
USAGE = {"input_tokens": 37, "cache_read_input_tokens": 1200, "cache_creation_input_tokens": 64}


def _cli(config: Path, *args: str) -> list[str]:
    argv = [sys.executable, "-m", "toolwire", "proxy", *args, "--config", str(config)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


def _ask(url: str, key: str) -> int:
    body = request_body([{"role": "user", "content": "hi"}], max_tokens=1000)
    reply = httpx2.post(f"{url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=30)
    return reply.status_code


def _ledger(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as db:
        return list(
            db.execute(
                'SELECT "user", input_tokens, output_tokens, cache_read_tokens,'
                " cache_write_tokens, cost, status FROM toolwire_ledger"
            ).fetchall()
        )


def test_two_replicas_hold_one_budget_and_refuse_a_revoked_key(
    tmp_path: Path,
    store_url: str,  # noqa: F811 (a fixture: one Redis, then a Redis Cluster)
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    # A 50 ms pause between events keeps all 20 requests in flight at once.
    with FakeServer(respond=answering(USAGE, 1000, delay=0.05)) as upstream:
        extra = f'store = "{store_url}"\nledger = "{postgres_url}"'
        config = priced_config(tmp_path, upstream.url, extra, prices=OUTPUT_ONLY)
        lines = _cli(config, "keys", "add", "--user", "alice", "--budget", "1usd/30d")
        key = lines[-1]
        with replicas(config, 2) as pair:
            urls = pair * 10
            with ThreadPoolExecutor(20) as pool:
                statuses = list(pool.map(_ask, urls, [key] * 20))
            deadline = time.monotonic() + 10
            while len(_ledger(postgres_url)) < 20:
                assert time.monotonic() < deadline, "the ledger rows did not arrive"
                time.sleep(0.05)
            rows = _ledger(postgres_url)
            record = [line for line in _cli(config, "keys", "list") if "alice" in line]
            key_id = record[0].split()[0]
            _cli(config, "keys", "revoke", key_id)
            revoked = time.monotonic()
            for url in pair:
                while _ask(url, key) != 401:
                    assert time.monotonic() - revoked < 1.0, f"{url} still takes the key"
            spend = _cli(config, "spend", "--user", "alice")
    admitted = statuses.count(200)
    assert admitted + statuses.count(403) == 20
    assert admitted == 10  # the budget's $1.00 over worst cases of $0.10, exactly
    assert len(upstream.requests) == admitted
    done = [r for r in rows if r[6] == "ok"]
    assert len(done) == admitted
    assert sum(float(r[5]) for r in rows) == pytest.approx(1.00, abs=1e-9)
    assert sum(float(r[5]) for r in rows) <= 1.00 + 1e-9
    # To the token: what the upstream reported for each admitted request.
    for column, reported in ((1, 37), (2, 1000), (3, 1200), (4, 64)):
        assert sum(int(str(r[column])) for r in rows) == reported * admitted
    assert any(line.startswith("alice") and "$1.000000" in line for line in spend)
    assert "tw-" not in "\n".join(_cli(config, "keys", "list"))


def test_replicas_whose_clocks_differ_hold_one_budget_window(
    tmp_path: Path,
    store_url: str,  # noqa: F811 (a fixture: one Redis, then a Redis Cluster)
) -> None:
    # $0.30 per 20 s; one replica's clock is 10 s ahead. The budget's window opened 12 s
    # ago by the real clock: on the fast replica's clock the next window has begun.
    with FakeServer(respond=answering(USAGE, 1000)) as upstream:
        config = priced_config(tmp_path, upstream.url, f'store = "{store_url}"', OUTPUT_ONLY)
        key = _cli(config, "keys", "add", "--user", "alice")[-1]
        accounts = open_accounts(store_url)
        accounts.set_budget("user:alice", Budget(300_000, 20, time.time() - 12))
        with replicas(config, 2, shifts=(0.0, 10.0)) as (slow, fast):
            statuses = [_ask(url, key) for url in (slow, fast) * 3]
    assert statuses.count(200) == 3  # one window, whatever each replica's clock says
    assert len(upstream.requests) == 3

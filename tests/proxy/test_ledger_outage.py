"""The ledger loses no row: while its PostgreSQL is down (stopped with ``pg_ctl`` mid-run)
rows wait in memory and in the spool, across a restart of the proxy, and are written
when it is back; a value PostgreSQL cannot store, or a row it refuses, costs no other
row. A real PostgreSQL and the proxy on uvicorn, a fake Anthropic upstream."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.people_support import answering, priced_config, served, wait_for
from tests.proxy.pg import Cluster, postgres_cluster, postgres_server, postgres_url  # noqa: F401
from tests.proxy.support import request_body
from toolwire.proxy import load_settings
from toolwire.proxy.people import writer
from toolwire.proxy.people.ledger import LedgerRow, PostgresLedger, with_timeouts
from toolwire.proxy.people.spool import REJECTED, Spool
from toolwire.proxy.people.writer import Writer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
USAGE = {"input_tokens": 10}


def _ask(url: str, session: str = "s", model: str = "claude-opus-5-5") -> int:
    body = request_body([{"role": "user", "content": "hi"}], model=model, max_tokens=100)
    headers = {"x-toolwire-session": session}
    body.pop("metadata")
    reply = httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)
    return reply.status_code


def _rows(url: str, columns: str = "session") -> list[tuple[Any, ...]]:
    try:
        with psycopg.connect(url, connect_timeout=2) as db:
            return list(db.execute(f"SELECT {columns} FROM toolwire_ledger").fetchall())
    except (psycopg.OperationalError, psycopg.errors.UndefinedTable):
        return []


def _gauge(url: str, name: str) -> float:
    text = httpx2.get(f"{url}/metrics", timeout=10).text
    found = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert found is not None, f"{name} not in /metrics"
    return float(found.group(1))


def test_rows_wait_through_an_outage_and_a_restart_and_arrive_when_the_database_returns(
    tmp_path: Path,
    postgres_cluster: Cluster,  # noqa: F811 (a fixture)
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(writer, "RETRY_MOST", 0.5)  # the test need not wait out a long backoff
    db, spool = postgres_cluster.url, tmp_path / "spool"
    caplog.set_level(logging.WARNING, logger="toolwire.proxy.people.writer")
    with FakeServer(respond=answering(USAGE, 5)) as upstream:
        extra = f'ledger = "{db}"\nledger_spool = "{spool}"\nledger_memory_rows = 3'
        settings = load_settings(priced_config(tmp_path, upstream.url, extra))
        with served(settings) as (url, _proxy):
            assert _ask(url, "before") == 200
            wait_for(lambda: len(_rows(db)) == 1, 10)
            postgres_cluster.stop()
            assert [_ask(url, f"down-{n}") for n in range(5)] == [200] * 5
            wait_for(lambda: _gauge(url, "toolwire_proxy_ledger_backlog_rows") == 5, 10)
            # Three wait in memory, the other two in this process's spool file.
            assert _gauge(url, "toolwire_proxy_ledger_spooled_rows") == 2
        assert len(list(spool.glob("rows-*.jsonl"))) == 1  # shutdown spooled the rest
        # A new proxy starts while the database is still down and reads the spool back.
        with served(settings) as (url, _proxy):
            assert _ask(url, "restarted") == 200
            wait_for(lambda: _gauge(url, "toolwire_proxy_ledger_backlog_rows") == 6, 10)
            postgres_cluster.start()
            wait_for(lambda: len(_rows(db)) == 7, 30)
            assert [_ask(url, f"after-{n}") for n in range(5)] == [200] * 5
            wait_for(lambda: len(_rows(db)) == 12, 10)
            assert _gauge(url, "toolwire_proxy_ledger_backlog_rows") == 0
    sessions = sorted(r[0] for r in _rows(db))
    expected = ["before", "restarted", *(f"down-{n}" for n in range(5))]
    assert sessions == sorted(expected + [f"after-{n}" for n in range(5)])
    assert not list(spool.glob("rows-*"))  # replayed files are removed
    said = "\n".join(r.getMessage() for r in caplog.records)
    assert "ledger unreachable" in said
    assert "rows waiting" in said
    assert "ledger reachable again" in said


def test_a_nul_in_a_model_name_costs_no_row(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    extra = f'ledger = "{postgres_url}"\nledger_spool = "{tmp_path / "spool"}"'
    with FakeServer(respond=answering(USAGE, 5)) as upstream:
        settings = load_settings(priced_config(tmp_path, upstream.url, extra))
        with served(settings) as (url, _proxy):
            assert _ask(url, "nul", "claude,claude-\x00up") == 200
            assert [_ask(url, f"other-{n}") for n in range(3)] == [200] * 3
            wait_for(lambda: len(_rows(postgres_url)) == 4, 10)
    assert dict(_rows(postgres_url, "session, model"))["nul"] == "claude-\ufffdup"
    # In one batch with 20 other rows (the writer batches what is queued together).
    ledger = PostgresLedger(postgres_url)
    batch = Writer(ledger)
    for n in range(20):
        batch.put(_row(f"batch-{n}", model="m\x00" if n == 7 else "m"))
    batch.close()
    assert len(_rows(postgres_url)) == 24


def _row(session: str, model: str = "m") -> LedgerRow:
    return LedgerRow(1.0, "alice", "", session, "claude", model, 1, 2, 0, 0, 0.5, "ok")


def test_a_row_the_database_refuses_is_kept_apart_and_its_batch_is_written(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811 (a fixture)
) -> None:
    ledger = PostgresLedger(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("ALTER TABLE toolwire_ledger ADD CHECK (session <> 'refused')")
    spool = Spool(tmp_path / "spool")
    out = Writer(ledger, spool=spool)
    sessions = [f"s{n}" for n in range(10)] + ["refused"] + [f"t{n}" for n in range(10)]
    for session in sessions:
        out.put(_row(session))
    out.close()
    written = sorted(r[0] for r in _rows(postgres_url))
    assert written == sorted(s for s in sessions if s != "refused")
    kept = [json.loads(line) for line in (tmp_path / "spool" / REJECTED).read_text().splitlines()]
    assert [k["row"]["session"] for k in kept] == ["refused"]
    assert "check constraint" in kept[0]["reason"]
    assert out.rejected == 1


def test_a_ledger_url_gets_timeouts_it_does_not_set() -> None:
    url = with_timeouts("postgresql://u@db.example/spend?connect_timeout=3")
    assert "connect_timeout=3" in url
    assert url.count("connect_timeout") == 1
    assert "keepalives_idle=30" in url
    assert with_timeouts(url) == url

"""Keys, budgets and the ledger through a real proxy on uvicorn and a fake Anthropic
upstream: what a client with a key is let through, refused, and charged."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.people_support import (
    answering,
    priced_config,
    proxied,
    served,
    usage_stream,
    wait_for,
)
from tests.proxy.support import request_body
from toolwire.proxy import load_settings
from toolwire.proxy.people.accounts import issue
from toolwire.proxy.people.gate import CACHE_SECONDS

USAGE = {"input_tokens": 120, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 500}
OUTPUT = 40
# 120 x 2 + 3000 x 0.5 + 500 x 4 + 40 x 100 micro-dollars.
COST = (120 * 2.0 + 3000 * 0.5 + 500 * 4.0 + 40 * 100.0) / 1e6


def _post(url: str, key: str | None, *, bearer: bool = False, **extra: Any) -> httpx2.Response:
    body = request_body([{"role": "user", "content": "hi"}], **extra)
    headers = {} if key is None else (
        {"authorization": f"Bearer {key}"} if bearer else {"x-api-key": key}
    )  # fmt: skip
    return httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=10)


def _ledger(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            'SELECT "user", team, backend, input_tokens, output_tokens, cache_read_tokens,'
            " cache_write_tokens, cost, status FROM toolwire_ledger ORDER BY at"
        ).fetchall()


def test_a_key_works_as_x_api_key_or_bearer_and_nothing_else_gets_in(tmp_path: Path) -> None:
    with FakeServer(respond=answering(USAGE, OUTPUT)) as upstream:
        settings = load_settings(priced_config(tmp_path, upstream.url))
        with served(settings) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice")
            assert _post(url, secret).status_code == 200
            assert _post(url, secret, bearer=True).status_code == 200
            # Once a key exists, a request without one (or with a made-up one) is refused.
            assert _post(url, None).status_code == 401
            refused = _post(url, secret[:-2] + "xx")
            assert refused.status_code == 401
            assert refused.json()["error"]["type"] == "authentication_error"
            assert secret not in refused.text
        assert len(upstream.requests) == 2


def test_the_single_token_still_works_beside_keys(tmp_path: Path) -> None:
    with FakeServer(respond=answering(USAGE, OUTPUT)) as upstream:
        config = priced_config(tmp_path, upstream.url, 'token = "team-token"')
        with served(load_settings(config)) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice")
            assert _post(url, "team-token").status_code == 200
            assert _post(url, secret).status_code == 200
            assert _post(url, "wrong").status_code == 401


def test_a_revoked_key_is_refused_within_a_second(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT)) as (url, proxy, _upstream):
        record, secret = issue(proxy.people.accounts, "alice")
        assert _post(url, secret).status_code == 200  # now cached as valid
        assert proxy.people.accounts.revoke(record.id)
        revoked = time.monotonic()
        while _post(url, secret).status_code == 200:
            assert time.monotonic() - revoked < 1.0, "still accepted after 1 s"
        assert _post(url, secret).status_code == 401
    assert CACHE_SECONDS < 1.0


def test_over_budget_is_a_permission_error_the_sdk_reads(tmp_path: Path) -> None:
    with proxied(tmp_path, answering({"input_tokens": 10}, 1000)) as (url, proxy, upstream):
        _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="0.25usd/1d")
        client = anthropic.Anthropic(base_url=url, api_key=secret, max_retries=0)
        ask = {"model": "claude-up", "messages": [{"role": "user", "content": "hi"}]}
        # Each costs 10 x 2 + 1000 x 100 micro-dollars; the worst case is about that.
        for _ in range(2):
            client.messages.create(max_tokens=1000, **ask)  # type: ignore[call-overload]
        with pytest.raises(anthropic.PermissionDeniedError) as refused:
            client.messages.create(max_tokens=1000, **ask)  # type: ignore[call-overload]
    assert refused.value.status_code == 403
    body: Any = refused.value.body
    assert body["type"] == "error"
    assert body["error"]["type"] == "permission_error"
    message = body["error"]["message"]
    assert "budget exceeded for user alice" in message
    assert "$0.20 of $0.25 spent or reserved" in message
    assert "resets at" in message
    assert len(upstream.requests) == 2  # the refused one never reached the upstream


def test_a_team_budget_holds_for_all_its_people(tmp_path: Path) -> None:
    with proxied(tmp_path, answering({"input_tokens": 10}, 1000)) as (url, proxy, _upstream):
        accounts = proxy.people.accounts
        _, alice = issue(accounts, "alice", team="eng")
        _, bob = issue(accounts, "bob", team="eng")
        accounts.set_budget("team:eng", accounts_budget("0.15usd/1d"))
        assert _post(url, alice, max_tokens=1000).status_code == 200
        refused = _post(url, bob, max_tokens=1000)
    assert refused.status_code == 403
    assert "budget exceeded for team eng" in refused.json()["error"]["message"]


def accounts_budget(text: str) -> Any:
    from toolwire.proxy.people.keys import parse_budget

    return parse_budget(text, time.time())


def test_models_patterns_limit_what_a_key_may_use(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT)) as (url, proxy, upstream):
        _, secret = issue(proxy.people.accounts, "alice", models=["other*"])
        assert _post(url, secret, model="other").status_code == 200
        refused = _post(url, secret, model="claude")
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "permission_error"
    assert "may not use claude,claude-up" in refused.json()["error"]["message"]
    assert [r.json()["model"] for r in upstream.requests] == ["other-up"]


def _dear_fails_over(received: Received) -> Reply:
    if received.json()["model"] == "other-up":  # backend ``other`` is overloaded
        return Reply(status=529, content_type="application/json", chunks=[b"{}"])
    return Reply(chunks=usage_stream(USAGE, output=OUTPUT))


def test_a_restricted_key_reaches_no_other_backend_by_any_spelling(tmp_path: Path) -> None:
    # ``other`` is the cheap backend the key is given; ``claude`` the dear one.
    extra = (
        '[proxy.aliases]\n"claude-dear" = "claude"\n'
        '[[proxy.routes]]\nheader = "x-dear"\nbackend = "claude"'
    )
    with FakeServer(respond=_dear_fails_over) as upstream:
        config = priced_config(tmp_path, upstream.url, extra)
        text = config.read_text().replace(
            'model = "other-up"', 'model = "other-up"\nfallbacks = ["claude"]'
        )
        config.write_text(text)
        with served(load_settings(config)) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice", models=["other"])
            spellings = ["claude,other", "claude,other-up", "claude-dear", "claude"]
            refused = [_post(url, secret, model=m) for m in spellings]
            body = request_body([{"role": "user", "content": "hi"}], model="claude-opus-5")
            headers = {"x-api-key": secret, "x-dear": "1"}
            routed = httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=10)
            # Its own backend fails: the fallback ``claude`` is not the key's to reach.
            failed = _post(url, secret, model="other")
    assert [r.status_code for r in refused] == [403] * len(spellings)
    assert all(r.json()["error"]["type"] == "permission_error" for r in refused)
    assert routed.status_code == 403
    assert failed.status_code == 529
    assert [r.json()["model"] for r in upstream.requests] == ["other-up"]


def test_the_ledger_holds_the_tokens_the_upstream_reported(tmp_path: Path) -> None:
    ledger = tmp_path / "spend.db"
    with FakeServer(respond=answering(USAGE, OUTPUT)) as upstream:
        config = priced_config(tmp_path, upstream.url, f'ledger = "{ledger}"')
        with served(load_settings(config)) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="5usd/30d")
            assert _post(url, secret).status_code == 200
            assert _post(url, secret, stream=True).status_code == 200
            wait_for(lambda: len(_ledger(ledger)) == 2)
            _, admin = issue(proxy.people.accounts, "ops", admin=True)  # /metrics is an admin's
            metrics = httpx2.get(f"{url}/metrics", headers={"x-api-key": admin}).text
            (counter,) = proxy.people.accounts.budgets(["user:alice"]).values()
            spent = proxy.people.accounts.spent(f"user:alice:{counter.window(time.time())}")
    row = ("alice", "eng", "claude", 120, OUTPUT, 3000, 500)
    assert [r[:7] for r in _ledger(ledger)] == [row, row]
    assert [r[8] for r in _ledger(ledger)] == ["ok", "ok"]
    assert all(r[7] == pytest.approx(COST) for r in _ledger(ledger))
    # The reservations were settled at the real cost.
    assert spent == round(2 * COST * 1e6)
    assert f'toolwire_proxy_team_tokens_total{{kind="cache_read",team="eng"}} {2 * 3000}' in metrics
    cost = re.search(r'^toolwire_proxy_team_cost_usd_total\{team="eng"\} (\S+)$', metrics, re.M)
    assert cost is not None
    assert float(cost.group(1)) == pytest.approx(2 * COST)


def test_a_stream_cut_midway_settles_what_was_reported(tmp_path: Path) -> None:
    ledger = tmp_path / "spend.db"

    def cut(received: Received) -> Reply:
        chunks = usage_stream({"input_tokens": 700}, output=0, cut=True)
        return Reply(chunks=chunks, drop_after=len(chunks))

    with FakeServer(respond=cut) as upstream:
        config = priced_config(tmp_path, upstream.url, f'ledger = "{ledger}"')
        with served(load_settings(config)) as (url, proxy):
            _, secret = issue(proxy.people.accounts, "alice", budget="1usd/1d")
            _post(url, secret, stream=True, max_tokens=2000)
            wait_for(lambda: len(_ledger(ledger)) == 1)
            (budget,) = proxy.people.accounts.budgets(["user:alice"]).values()
            spent = proxy.people.accounts.spent(f"user:alice:{budget.window(time.time())}")
    (row,) = _ledger(ledger)
    assert row[3] == 700
    assert row[8] == "cut"
    # Charged the 700 input tokens and the one output token reported, not the worst case.
    assert spent == 700 * 2 + 1 * 100


def test_a_team_limit_counts_every_key_of_the_team(tmp_path: Path) -> None:
    # [proxy.limits] counts a request against the person its key names: two people of
    # one team share the team's requests per minute, whichever key they send.
    with FakeServer(respond=answering(USAGE, OUTPUT)) as upstream:
        extra = "[proxy.limits]\nteam_requests_per_minute = 3"
        with served(load_settings(priced_config(tmp_path, upstream.url, extra))) as (url, proxy):
            _, alice = issue(proxy.people.accounts, "alice", team="core")
            _, bob = issue(proxy.people.accounts, "bob", team="core")
            _, carol = issue(proxy.people.accounts, "carol", team="docs")
            codes = [_post(url, key).status_code for key in (alice, bob, alice, bob)]
            assert codes == [200, 200, 200, 429]
            assert _post(url, carol).status_code == 200  # another team's minute
        assert len(upstream.requests) == 4


def test_the_next_request_at_once_is_judged_on_what_the_last_one_cost(tmp_path: Path) -> None:
    """A reservation is its worst case until the response's settlement has run on the
    ledger's thread. A client that sends its next request the moment the last answer
    ended must be judged on what that answer cost, not on its worst case."""
    with proxied(tmp_path, answering({"input_tokens": 10}, 1000)) as (url, proxy, upstream):
        # About $0.10 spent per answer, $0.40 reserved for max_tokens 4000: two worst
        # cases do not fit $0.60, one answer and one worst case do.
        _, secret = issue(proxy.people.accounts, "alice", team="eng", budget="0.6usd/1d")
        busy = threading.Event()

        def hold() -> None:  # the ledger's thread is held: the settlement waits
            busy.wait()

        proxy.people.writer.put(hold)
        assert _post(url, secret, max_tokens=4000).status_code == 200
        threading.Timer(0.3, busy.set).start()
        second = _post(url, secret, max_tokens=4000)
        assert second.status_code == 200, second.text
        third = _post(url, secret, max_tokens=4000)  # $0.20 spent, $0.40 more: refused
    assert third.status_code == 403
    assert len(upstream.requests) == 2

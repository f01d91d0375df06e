"""Keys that expire and rotate, and budgets people can see: ``keys list``'s spend and
what is left, ``budget show``, and the budget headers on every keyed response."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from typer.testing import CliRunner

from tests.proxy.people_support import answering, priced_config, proxied, wait_for
from tests.proxy.support import request_body
from toolwire.cli._app import app
from toolwire.proxy.people.accounts import SQLiteAccounts, issue, rotate
from toolwire.proxy.people.gate import CACHE_SECONDS
from toolwire.proxy.people.keys import KEY_PREFIX, digest, parse_budget

USAGE = {"input_tokens": 100}
OUTPUT = 50  # 100 x 2 + 50 x 100 micro-dollars: $0.0052 a request
COST = 0.0052


def _post(url: str, key: str, **extra: Any) -> httpx2.Response:
    body = request_body([{"role": "user", "content": "hi"}], **{"max_tokens": 1000, **extra})
    return httpx2.post(f"{url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=10)


def _store(tmp: Path) -> str:
    return f'store = "{tmp / "store.db"}"'


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["proxy", *args])
    return result.exit_code, result.output


def test_an_expired_key_is_refused_and_a_live_one_served(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _store(tmp_path)) as (url, proxy, _):
        _, live = issue(proxy.people.accounts, "alice", expires=time.time() + 3600)
        _, soon = issue(proxy.people.accounts, "bob", expires=time.time() + 1.0)
        assert _post(url, live).status_code == 200
        assert _post(url, soon).status_code == 200
        time.sleep(1.0 + CACHE_SECONDS + 0.1)
        refused = _post(url, soon)
        assert refused.status_code == 401
        assert soon not in refused.text
        assert _post(url, live).status_code == 200


def test_a_rotated_key_works_for_its_grace_then_only_the_new_one(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _store(tmp_path)) as (url, proxy, _):
        accounts = proxy.people.accounts
        old, secret = issue(accounts, "alice", team="eng", models=("claude*",))
        new, fresh = rotate(accounts, old.id, 1.5)[:2]
        assert (new.user, new.team, new.models) == ("alice", "eng", ("claude*",))
        assert fresh != secret
        assert _post(url, secret).status_code == 200  # within the grace
        assert _post(url, fresh).status_code == 200
        time.sleep(1.5 + CACHE_SECONDS + 0.1)
        assert _post(url, secret).status_code == 401
        assert _post(url, fresh).status_code == 200


def test_keys_add_expires_and_keys_rotate_on_the_command_line(tmp_path: Path) -> None:
    config = str(priced_config(tmp_path, "http://127.0.0.1:9", _store(tmp_path)))
    code, out = _cli("keys", "add", "--user", "carol", "--expires", "90d", "--config", config)
    assert code == 0, out
    record = SQLiteAccounts(tmp_path / "store.db").find(digest(out.splitlines()[-1]))
    assert record is not None
    assert record.expires is not None
    assert abs(record.expires - (time.time() + 90 * 86400)) < 60
    code, out = _cli("keys", "rotate", record.id, "--grace", "2h", "--config", config)
    assert code == 0, out
    assert out.splitlines()[-1].startswith(KEY_PREFIX)
    old = SQLiteAccounts(tmp_path / "store.db").find(record.digest)
    assert old is not None
    assert old.expires is not None
    assert abs(old.expires - (time.time() + 7200)) < 60
    code, said = _cli("keys", "add", "--user", "x", "--expires", "soon", "--config", config)
    assert code != 0
    assert "--expires 'soon'" in said


def test_keyed_responses_carry_the_budget_left_and_its_reset(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _store(tmp_path)) as (url, proxy, _):
        accounts = proxy.people.accounts
        _, secret = issue(accounts, "alice", team="eng", budget="1usd/1d")
        accounts.set_budget("team:eng", parse_budget("0.5usd/1d", time.time()))
        first = _post(url, secret)
        assert first.status_code == 200
        # The team's budget is the tighter one: its headers are the ones sent.
        assert first.headers["x-toolwire-budget-subject"] == "team:eng"
        assert float(first.headers["x-toolwire-budget-limit-usd"]) == 0.5
        reset = datetime.fromisoformat(first.headers["x-toolwire-budget-reset"])
        assert 0 < reset.timestamp() - time.time() <= 86400
        assert reset.tzinfo == UTC
        wait_for(lambda: accounts.spent(_counter(accounts, "team:eng")) == round(COST * 1e6))
        second = _post(url, secret)
        left = float(second.headers["x-toolwire-budget-remaining-usd"])
        # What the first cost is gone; the second's worst case is reserved as it starts.
        assert left <= 0.5 - COST
        wait_for(lambda: accounts.spent(_counter(accounts, "team:eng")) == round(2 * COST * 1e6))
        assert (
            float(_post(url, secret, stream=True).headers["x-toolwire-budget-remaining-usd"]) < left
        )


def test_a_refusal_over_budget_carries_the_headers_too(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _store(tmp_path)) as (url, proxy, _):
        _, secret = issue(proxy.people.accounts, "dave", budget="0.05usd/1d")
        refused = _post(url, secret, max_tokens=100_000)  # a worst case of $10
        assert refused.status_code == 403
        assert float(refused.headers["x-toolwire-budget-remaining-usd"]) == 0.05
        assert refused.headers["x-toolwire-budget-subject"] == "user:dave"


def _counter(accounts: Any, subject: str) -> str:
    (budget,) = accounts.budgets([subject]).values()
    return f"{subject}:{budget.window(time.time())}"


def test_keys_list_and_budget_show_say_what_is_spent_and_left(tmp_path: Path) -> None:
    config = priced_config(tmp_path, "http://127.0.0.1:9", _store(tmp_path))
    accounts = SQLiteAccounts(tmp_path / "store.db")
    record, _ = issue(accounts, "erin", team="ops", budget="10usd/30d")
    budget = parse_budget("100usd/30d", time.time())
    accounts.set_budget("team:ops", budget)
    (user_budget,) = accounts.budgets(["user:erin"]).values()
    accounts.settle([_charge(f"user:erin:{user_budget.window(time.time())}", 2_500_000)])
    accounts.settle([_charge(f"team:ops:{budget.window(time.time())}", 40_000_000)])
    code, listed = _cli("keys", "list", "--config", str(config))
    assert code == 0, listed
    header, row = listed.splitlines()[0].split(), listed.splitlines()[1].split()
    assert row[header.index("spent")] == "$2.50"
    assert row[header.index("left")] == "$7.50"
    code, shown = _cli("budget", "show", "--team", "ops", "--config", str(config))
    assert code == 0, shown
    assert shown.splitlines()[0] == "team ops: $100.00 per 30d"
    assert shown.splitlines()[1].startswith("spent $40.00, left $60.00, resets ")
    code, said = _cli("budget", "show", "--user", "nobody", "--config", str(config))
    assert code != 0
    assert "user nobody has no budget" in said
    # Setting a budget still reads as before.
    assert _cli("budget", "--team", "ops", "5usd/1d", "--config", str(config))[0] == 0
    assert record.id in listed


def _charge(counter: str, amount: int) -> Any:
    from toolwire.proxy.people.keys import Charge

    return Charge(counter, 0, amount, 86400)

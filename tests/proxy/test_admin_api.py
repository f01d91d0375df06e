"""The admin HTTP API through a real proxy: keys made, listed, rotated and revoked with
the admin token, budgets set and read, spend grouped four ways; a person's key, the
single token and no credential are refused."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.proxy.people_support import answering, proxied, wait_for
from tests.proxy.support import request_body
from toolwire.proxy.people.accounts import issue
from toolwire.proxy.people.gate import CACHE_SECONDS

ADMIN = "admin-token-for-the-api-test"
ADMIN_ENV = "TW_TEST_ADMIN_API"
USAGE = {"input_tokens": 100}
OUTPUT = 50


def _extra(tmp: Path) -> str:
    return (f'store = "{tmp / "store.db"}"\nledger = "{tmp / "spend.db"}"\n'
            f'admin_token_env = "{ADMIN_ENV}"\ntoken = "team-token"')  # fmt: skip


def _call(url: str, method: str, path: str, key: str | None = ADMIN, **kw: Any) -> httpx2.Response:
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    return httpx2.request(method, f"{url}{path}", headers=headers, timeout=10, **kw)


def _post(url: str, key: str, model: str = "claude") -> httpx2.Response:
    body = request_body([{"role": "user", "content": "hi"}], model=model, max_tokens=100)
    return httpx2.post(f"{url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=10)


@pytest.fixture(autouse=True)
def _admin_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


def test_keys_are_made_listed_rotated_and_revoked_over_http(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, _, _up):
        made = _call(url, "POST", "/admin/keys", json={
            "user": "alice", "team": "eng", "budget": "5usd/30d", "expires": "90d",
            "models": ["claude*"]})  # fmt: skip
        assert made.status_code == 201, made.text
        key, secret = made.json()["key"], made.json()["secret"]
        assert key["user"] == "alice"
        assert key["team"] == "eng"
        assert key["models"] == ["claude*"]
        assert key["state"] == "active"
        assert key["expires"] is not None
        assert _post(url, secret).status_code == 200
        listed = _call(url, "GET", "/admin/keys")
        assert listed.status_code == 200
        (shown,) = listed.json()["keys"]
        assert shown["id"] == key["id"]
        assert shown["left_usd"] < 5.0
        assert secret not in listed.text
        assert "digest" not in shown
        rotated = _call(url, "POST", f"/admin/keys/{key['id']}/rotate", json={"grace": "1s"})
        assert rotated.status_code == 201, rotated.text
        fresh = rotated.json()["secret"]
        assert rotated.json()["replaced"]["id"] == key["id"]
        assert _post(url, fresh).status_code == 200
        time.sleep(1 + CACHE_SECONDS + 0.1)
        assert _post(url, secret).status_code == 401
        new_id = rotated.json()["key"]["id"]
        assert _call(url, "POST", f"/admin/keys/{new_id}/revoke").json()["key"]["state"] == (
            "revoked"
        )
        time.sleep(CACHE_SECONDS + 0.1)
        assert _post(url, fresh).status_code == 401
        missing = _call(url, "POST", "/admin/keys/key_nope/revoke")
        assert missing.status_code == 404
        assert "key_nope" in missing.json()["error"]["message"]


def test_budgets_are_set_and_shown_over_http(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, _, _up):
        put = _call(url, "PUT", "/admin/budgets", json={"team": "eng", "budget": "20usd/7d"})
        assert put.status_code == 200, put.text
        shown = _call(url, "GET", "/admin/budgets", params={"team": "eng"}).json()
        assert shown["team"] == "eng"
        assert shown["limit_usd"] == 20.0
        assert shown["period_seconds"] == 7 * 86400
        assert shown["left_usd"] == 20.0
        assert _call(url, "GET", "/admin/budgets", params={"user": "zed"}).status_code == 404
        bad = _call(url, "PUT", "/admin/budgets", json={"team": "eng", "budget": "lots"})
        assert bad.status_code == 400
        assert "AMOUNT/PERIOD" in bad.json()["error"]["message"]


def _ledger(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            'SELECT "user", team, model, cost, status FROM toolwire_ledger'
        ).fetchall()


def test_spend_by_person_team_model_and_day_matches_the_ledger(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, proxy, _up):
        accounts = proxy.people.accounts
        _, alice = issue(accounts, "alice", team="eng")
        _, bob = issue(accounts, "bob", team="ops", budget="0.001usd/1d")
        for key, model in ((alice, "claude"), (alice, "other"), (alice, "claude"), (bob, "claude")):
            _post(url, key, model)
        wait_for(lambda: len(_ledger(tmp_path / "spend.db")) == 4)
        rows = _ledger(tmp_path / "spend.db")
        by_user = _call(url, "GET", "/admin/spend", params={"by": "user"}).json()["rows"]
        assert {r["user"]: (r["served"], r["refused"]) for r in by_user} == {
            "alice": (3, 0), "bob": (0, 1)}  # fmt: skip
        cost = {r["user"]: r["cost"] for r in by_user}
        assert cost["alice"] == pytest.approx(sum(r[3] for r in rows if r[0] == "alice"))
        by_model = _call(url, "GET", "/admin/spend", params={"by": "model", "user": "alice"})
        served = Counter(r[2] for r in rows if r[0] == "alice")
        assert {r["model"]: r["served"] for r in by_model.json()["rows"]} == served
        by_day = _call(url, "GET", "/admin/spend", params={"by": "day,team", "since": "1d"})
        today = time.strftime("%Y-%m-%d", time.gmtime())
        assert {(r["day"], r["team"]) for r in by_day.json()["rows"]} == {
            (today, "eng"), (today, "ops")}  # fmt: skip
        wrong = _call(url, "GET", "/admin/spend", params={"by": "colour"})
        assert wrong.status_code == 400


def test_a_persons_key_the_token_and_no_credential_are_refused(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, proxy, _up):
        record, person = issue(proxy.people.accounts, "carol", team="eng")
        key = f"/admin/keys/{record.id}"
        routes = [("GET", "/admin/keys"), ("POST", "/admin/keys"), ("GET", "/admin/spend"),
                  ("POST", f"{key}/revoke"), ("PUT", "/admin/budgets"),
                  ("GET", "/admin/budgets?user=carol"), ("POST", f"{key}/rotate")]  # fmt: skip
        for method, path in routes:
            said = _call(url, method, path, person, json={"user": "carol", "budget": "1usd/1d"})
            assert said.status_code == 403, (method, path)
            assert f"the key {record.id} of carol" in said.json()["error"]["message"]
            assert person not in said.text
            assert _call(url, method, path, "team-token").status_code == 403
            assert _call(url, method, path, None).status_code == 401
        _, admin_key = issue(proxy.people.accounts, "root", admin=True)
        assert _call(url, "GET", "/admin/keys", admin_key).status_code == 200
        assert _post(url, person).status_code == 200  # the key itself still works


def test_an_admin_body_is_read_within_max_body_bytes(tmp_path: Path) -> None:
    extra = _extra(tmp_path) + "\nmax_body_bytes = 1000"
    with proxied(tmp_path, answering(USAGE, OUTPUT), extra) as (url, _proxy, _up):
        big = {"user": "dana", "budget": "1usd/1d", "pad": "x" * 5000}
        assert _call(url, "PUT", "/admin/budgets", json=big).status_code == 413
        small = {"user": "dana", "budget": "1usd/1d"}
        assert _call(url, "PUT", "/admin/budgets", json=small).status_code == 200
        assert _call(url, "POST", "/admin/keys/none/revoke").status_code != 500  # no body

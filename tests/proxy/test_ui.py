"""``GET /ui``: the team's page, for an admin only, and what it shows checked in a real
browser (Debian's Chromium, headless) against the ledger."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2
import pytest
from PIL import Image

from tests.proxy.browser import Browser, chromium_binary
from tests.proxy.people_support import answering, proxied, wait_for
from tests.proxy.support import request_body
from toolwire.proxy.people.accounts import issue
from toolwire.proxy.people.keys import parse_budget
from toolwire.proxy.people.ledger import LedgerRow, SQLiteLedger
from toolwire.proxy.ui_page import BAR

ADMIN = "admin-token-for-the-page-test"
ADMIN_ENV = "TW_TEST_UI_ADMIN"
USAGE = {"input_tokens": 100}
OUTPUT = 50
# Where the docs' screenshot is written when asked (``TOOLWIRE_UI_SCREENSHOT=1``).
DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "proxy-ui.png"


@pytest.fixture(autouse=True)
def _admin_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)


def _extra(tmp: Path) -> str:
    return (f'store = "{tmp / "store.db"}"\nledger = "{tmp / "spend.db"}"\n'
            f'admin_token_env = "{ADMIN_ENV}"\ntoken = "team-token"')  # fmt: skip


def _post(url: str, key: str, model: str = "claude", max_tokens: int = 100) -> httpx2.Response:
    body = request_body([{"role": "user", "content": "hi"}], model=model, max_tokens=max_tokens)
    return httpx2.post(f"{url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=10)


def _page(url: str, key: str | None, **kw: Any) -> httpx2.Response:
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    return httpx2.get(f"{url}/ui", headers=headers, timeout=10, **kw)


def test_the_page_is_an_admins_and_never_shows_a_secret(tmp_path: Path) -> None:
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, proxy, _):
        record, person = issue(proxy.people.accounts, "carol", team="eng", budget="5usd/30d")
        _, admin_key = issue(proxy.people.accounts, "root", admin=True)
        refused = _page(url, person)
        assert refused.status_code == 403
        assert "not an admin" in refused.text
        assert _page(url, "team-token").status_code == 403
        assert _page(url, None).status_code == 401
        assert "<form" in _page(url, None).text
        login = httpx2.post(f"{url}/ui/login", data={"key": person}, timeout=10)
        assert login.status_code == 403
        assert "toolwire_ui" not in login.headers.get("set-cookie", "")
        for admin in (ADMIN, admin_key):
            shown = _page(url, admin)
            assert shown.status_code == 200
            assert record.id in shown.text
            assert person not in shown.text
            assert admin_key not in shown.text
            assert record.digest not in shown.text
        assert "<script" not in shown.text
        assert "http://" not in shown.text.replace("http://www.w3.org/2000/svg", "")


def test_signing_in_sets_a_cookie_that_is_not_the_key(tmp_path: Path) -> None:
    with (
        proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, _, _up),
        httpx2.Client(base_url=url, timeout=10) as client,
    ):
        signed = client.post("/ui/login", data={"key": ADMIN})
        assert signed.status_code == 303
        cookie = signed.headers["set-cookie"]
        assert ADMIN not in cookie
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie.replace("Strict", "strict")
        assert client.get("/ui").status_code == 200
        client.post("/ui/logout")
        assert client.get("/ui").status_code == 401


def _seed(ledger_path: Path) -> None:
    """A month of requests by three people on two teams and three models."""
    rng, now = random.Random(7), time.time()
    people = (("alice", "eng"), ("bob", "eng"), ("dana", "ops"))
    models = ("claude-up", "other-up", "glm-4.6")
    outcomes = ("ok",) * 9 + ("refused",)
    rows = [LedgerRow(now - rng.uniform(0, 29.5 * 86400), *rng.choice(people), "s",
                      "claude", rng.choice(models), rng.randint(100, 9000), rng.randint(10, 900),
                      0, 0, round(rng.uniform(0.001, 0.4), 6), rng.choice(outcomes))
            for _ in range(600)]  # fmt: skip
    rows = [r if r.status == "ok" else replace(r, cost=0.0) for r in rows]
    ledger = SQLiteLedger(ledger_path)
    ledger.write(rows)
    ledger.close()


def _ledger_by_user(path: Path, since: float) -> dict[str, float]:
    with sqlite3.connect(path) as db:
        found = db.execute('SELECT "user", SUM(cost) FROM toolwire_ledger WHERE at >= ? '
                           'GROUP BY "user"', (since,)).fetchall()  # fmt: skip
    return {u: c for u, c in found}


_READ = """JSON.stringify({
  total: Number(document.querySelector('#total').dataset.usd),
  people: [...document.querySelectorAll('#spend-people tr[data-user]')].map(
    r => [r.dataset.user, Number(r.dataset.usd)]),
  budgets: Object.fromEntries([...document.querySelectorAll('#budgets tr[data-subject]')].map(
    r => [r.dataset.subject, Number(r.dataset.left)])),
  keys: [...document.querySelectorAll('#keys tr[data-key]')].map(r => r.dataset.key),
  backends: [...document.querySelectorAll('#backends tr[data-backend]')].map(
    r => r.dataset.backend),
  recent: document.querySelectorAll('#recent tr[data-usd]').length,
  bars: document.querySelectorAll('#chart-days rect.bar').length,
  chart: (b => [b.x, b.y, b.width, b.height])(
    document.querySelector('#chart-days').getBoundingClientRect()),
})"""


@pytest.mark.e2e
def test_an_admin_signs_in_and_the_page_matches_the_ledger_in_a_browser(tmp_path: Path) -> None:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium is not installed (`make deps` installs it as root via apt-get)")
    _seed(tmp_path / "spend.db")
    with proxied(tmp_path, answering(USAGE, OUTPUT), _extra(tmp_path)) as (url, proxy, _):
        accounts = proxy.people.accounts
        keys = [issue(accounts, u, team=t, budget="20usd/30d")[0] for u, t in
                (("alice", "eng"), ("bob", "eng"), ("dana", "ops"))]  # fmt: skip
        accounts.set_budget("team:eng", parse_budget("50usd/30d", time.time()))
        secrets = [issue(accounts, "alice", team="eng")[1]]
        for _ in range(3):
            assert _post(url, secrets[0]).status_code == 200
        wait_for(lambda: len(_ledger_by_user(tmp_path / "spend.db", 0)) == 3 and sum(
            1 for _ in sqlite3.connect(tmp_path / "spend.db").execute(
                "SELECT 1 FROM toolwire_ledger")) == 603)  # fmt: skip
        backends = list(proxy.settings.config.backends)
        browser = Browser(binary)
        try:
            browser.go(f"{url}/ui")
            assert browser.evaluate("document.querySelector('input[name=key]') !== null")
            browser.evaluate(f"document.querySelector('input[name=key]').value = {ADMIN!r}; "
                             "document.forms[0].submit(); true")  # fmt: skip
            browser.wait_for_load()
            read = json.loads(browser.evaluate(_READ))
            shot = browser.screenshot()
        finally:
            browser.close()
    since = time.time() - 30 * 86400
    ledger = _ledger_by_user(tmp_path / "spend.db", since - 60)
    assert dict(read["people"]) == pytest.approx(ledger, abs=1e-5)
    assert read["total"] == pytest.approx(sum(ledger.values()), abs=1e-5)
    assert {k.id for k in keys} <= set(read["keys"])
    assert read["backends"] == backends
    assert read["recent"] == 25
    assert read["bars"] >= 28
    assert read["budgets"]["user:alice"] == pytest.approx(20.0 - 3 * 0.0052, abs=1e-4)
    assert read["budgets"]["team:eng"] == pytest.approx(50.0 - 3 * 0.0052, abs=1e-4)
    (tmp_path / "ui.png").write_bytes(shot)
    assert _bar_pixels(shot, read["chart"]) > 500
    if os.environ.get("TOOLWIRE_UI_SCREENSHOT"):
        shutil.copyfile(tmp_path / "ui.png", DOCS_SHOT)


def _bar_pixels(png: bytes, box: list[float]) -> int:
    """Pixels of the bars' colour inside the day chart's box of the screenshot."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    x, y, w, h = (round(v) for v in box)
    chart = image.crop((x, y, x + w, y + h))
    target = tuple(int(BAR[i : i + 2], 16) for i in (1, 3, 5))
    data = chart.tobytes()  # RGB triples, row by row
    close = 0
    for n in range(0, len(data), 3):
        if sum(abs(data[n + k] - target[k]) for k in range(3)) < 30:
            close += 1
    return close

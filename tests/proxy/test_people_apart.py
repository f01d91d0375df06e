"""People kept apart on a shared proxy: each person's sessions are their own, and only an
admin switches another's session or reads ``/metrics`` (a real proxy on uvicorn and a
fake Anthropic upstream that records what reaches it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from tests.fakes.http import FakeServer
from tests.proxy.people_support import answering, priced_config, proxied, served
from toolwire.cli._app import app
from toolwire.handoff.render import OPEN
from toolwire.proxy import load_settings
from toolwire.proxy.people.accounts import issue

ADMIN_ENV = "TOOLWIRE_TEST_ADMIN_TOKEN"
ADMIN = "admin-secret-for-the-test"
USAGE = {"input_tokens": 12}
KEY_VARIABLES = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY")  # where people keep their key


def _curl(url: str, key: str, history: list[dict[str, Any]]) -> httpx2.Response:
    """What a curl or SDK script sends: no metadata, no session header."""
    body = {"model": "claude-opus-5-5", "max_tokens": 64, "messages": history}
    return httpx2.post(f"{url}/v1/messages", json=body, headers={"x-api-key": key}, timeout=10)


def _switch(url: str, key: str, data: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{url}/control/switch", json=data, headers={"x-api-key": key}, timeout=10)


def _conversation(name: str, turns: int) -> list[dict[str, Any]]:
    """``turns`` exchanges of ``name``, then a question (more than the handoff's last two
    turns kept verbatim, so a switch rewrites the start into the handoff block)."""
    history: list[dict[str, Any]] = []
    for n in range(turns):
        history += [
            {"role": "user", "content": f"{name}: read note {n}"},
            {"role": "assistant", "content": f"{name}: note {n} says hello"},
        ]
    return [*history, {"role": "user", "content": f"{name}: and now?"}]


def test_a_switch_by_one_person_never_reaches_another_persons_requests(
    tmp_path: Path,
) -> None:
    with proxied(tmp_path, answering(USAGE, 5)) as (url, proxy, upstream):
        _, carol = issue(proxy.people.accounts, "carol", team="eng")
        _, dave = issue(proxy.people.accounts, "dave", team="eng")
        assert _curl(url, carol, _conversation("carol", 4)).status_code == 200
        assert _curl(url, dave, _conversation("dave", 4)).status_code == 200
        # carol moves "her" implicit session (the one a script without an id uses).
        moved = _switch(url, carol, {"backend": "other"})
        assert moved.status_code == 200, moved.text
        assert _curl(url, carol, _conversation("carol", 5)).status_code == 200
        answer = _curl(url, dave, _conversation("dave", 5))
        # Even naming the session outright, dave reaches only his own.
        named = _switch(url, dave, {"backend": "claude", "session": "default"})
        assert _curl(url, carol, _conversation("carol", 5)).status_code == 200
    assert answer.status_code == 200
    assert answer.headers["x-toolwire-session"] == "default"
    assert answer.headers["x-toolwire-backend"] == "claude"
    assert named.status_code == 200
    sent = [r.json() for r in upstream.requests]
    daves = [s for s in sent if "dave" in json.dumps(s["messages"])]
    assert [s["model"] for s in daves] == ["claude-up", "claude-up"]
    assert daves[-1]["messages"] == _conversation("dave", 5)
    assert OPEN not in json.dumps(daves)
    carols = [s for s in sent if "carol" in json.dumps(s["messages"])]
    # carol's own switch holds for her, and dave's request to "default" did not undo it.
    assert [s["model"] for s in carols] == ["claude-up", "other-up", "other-up"]
    assert OPEN in json.dumps(carols[-1]["messages"])


def _admin_config(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    return priced_config(tmp_path, url, f'admin_token_env = "{ADMIN_ENV}"')


def test_admin_only_endpoints_answer_403_to_a_person_and_200_to_an_admin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeServer(respond=answering(USAGE, 5)) as upstream:
        settings = load_settings(_admin_config(tmp_path, upstream.url, monkeypatch))
        with served(settings) as (url, proxy):
            accounts = proxy.people.accounts
            _, carol = issue(accounts, "carol", team="eng")
            issue(accounts, "dave", team="ops")
            _, named_admin = issue(accounts, "olga", admin=True)
            other = {"backend": "other", "session": "s", "user": "dave"}
            person = [
                httpx2.get(f"{url}/metrics", headers={"x-api-key": carol}),
                _switch(url, carol, other),
            ]
            admins = [
                httpx2.get(f"{url}/metrics", headers={"x-api-key": ADMIN}),
                httpx2.get(f"{url}/metrics", headers={"authorization": f"Bearer {named_admin}"}),
                _switch(url, ADMIN, other),
                _switch(url, named_admin, {**other, "team": "ops"}),
            ]
            own = _switch(url, carol, {"backend": "other", "session": "s"})
    assert [r.status_code for r in person] == [403, 403]
    for refused in person:
        error = refused.json()["error"]
        assert error["type"] == "permission_error"
        assert "admin" in error["message"]
        assert carol not in refused.text
    assert [r.status_code for r in admins] == [200, 200, 200, 200], [r.text for r in admins]
    assert admins[0].text.startswith("# ")
    assert admins[2].json() == {"session": "s", "backend": "other", "user": "dave", "team": "ops"}
    assert own.status_code == 200


def _switch_cli(url: str, config: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """``toolwire proxy switch other ARGS`` in a process with exactly the variables of
    ``env`` that name credentials."""
    port = url.rsplit(":", 1)[1]
    clean = {k: v for k, v in os.environ.items() if k not in {ADMIN_ENV, *KEY_VARIABLES}}
    argv = ["proxy", "switch", "other", "--session", "s", "--port", port, "--config", str(config)]
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", *argv, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**clean, **env},
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.e2e
@pytest.mark.slow
def test_proxy_switch_says_which_credential_it_sent_and_what_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = f'store = "{tmp_path / "store.db"}"\nadmin_token_env = "{ADMIN_ENV}"'
    with FakeServer(respond=answering(USAGE, 5)) as upstream:
        config = priced_config(tmp_path, upstream.url, extra)
        monkeypatch.setenv(ADMIN_ENV, ADMIN)
        with served(load_settings(config)) as (url, proxy):
            _, carol = issue(proxy.people.accounts, "carol")
            issue(proxy.people.accounts, "dave")
            nothing = _switch_cli(url, config, {})
            others = _switch_cli(url, config, {"ANTHROPIC_API_KEY": carol}, "--user", "dave")
            own = _switch_cli(url, config, {"ANTHROPIC_API_KEY": carol})
            admin = _switch_cli(url, config, {ADMIN_ENV: ADMIN}, "--user", "dave")
    code, said = nothing
    assert code != 0
    (line,) = said.strip().splitlines()
    assert "no proxy key sent" in line
    assert "this command sent no credential" in line
    assert "admin_token_env" in line
    assert "ANTHROPIC_API_KEY" in line
    code, said = others
    assert code != 0
    (line,) = said.strip().splitlines()
    assert "switching a session of dave needs an admin" in line
    assert f"the admin token (${ADMIN_ENV})" in line
    assert "this command sent your key from $ANTHROPIC_API_KEY" in line
    assert carol not in said
    assert own == (0, "session s of carol -> other\n")
    assert admin == (0, "session s of dave -> other\n")


def test_serve_refuses_to_start_without_the_admin_token_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ADMIN_ENV, raising=False)
    config = priced_config(tmp_path, "http://127.0.0.1:9", f'admin_token_env = "{ADMIN_ENV}"')
    result = CliRunner().invoke(app, ["proxy", "serve", "--config", str(config)])
    assert result.exit_code != 0
    (line,) = result.output.strip().splitlines()
    assert f"${ADMIN_ENV}, which is not set" in line

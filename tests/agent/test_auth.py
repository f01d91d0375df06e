"""Authentication as the ACP registry checks it: ``authMethods`` in ``initialize``, an
``authenticate`` round trip with the ``agent`` method, and the ``terminal`` method
(``toolwire acp --login``) storing a key a later agent uses."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION
from acp.exceptions import RequestError
from acp.schema import AuthCapabilities, ClientCapabilities

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import KEY, check_wire, environment
from toolwire.agent.protocol.handshake import early_answer

pytestmark = pytest.mark.anyio

TERMINAL = ClientCapabilities(auth=AuthCapabilities(terminal=True))


async def test_the_agent_method_authenticates_when_the_key_is_there(acp: AgentUnderTest) -> None:
    init = await acp.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
    methods = [m.model_dump(by_alias=True, exclude_none=True) for m in init.auth_methods or ()]
    # Without the client's terminal capability no terminal method is offered (ACP:
    # terminal methods only to a client that enabled them); beside the agent method, an
    # env_var method per provider (what a benchmark harness signs in with).
    assert [(m["id"], m.get("type", "agent")) for m in methods] == [
        ("env", "agent"),
        ("anthropic", "env_var"),
        ("openai", "env_var"),
        ("gemini", "env_var"),
    ]
    assert await acp.run.conn.authenticate(method_id="env") is not None
    check_wire(acp.run.wire)


async def test_the_terminal_method_is_offered_to_a_client_that_runs_it(
    acp: AgentUnderTest,
) -> None:
    init = await acp.run.conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=TERMINAL
    )
    methods = {
        m.id: m.model_dump(by_alias=True, exclude_none=True) for m in init.auth_methods or ()
    }
    assert methods["login"]["type"] == "terminal"
    assert methods["login"]["args"] == ["--login"]
    # The early answer (before the SDK loads) says the same to the same client.
    params = {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": True}}}
    early = early_answer({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    assert early is not None
    ids = [m["id"] for m in early["result"]["authMethods"]]
    assert ids == ["env", "anthropic", "openai", "gemini", "login"]
    # A terminal method is never passed to authenticate (ACP): refused.
    with pytest.raises(RequestError):
        await acp.run.conn.authenticate(method_id="login")
    check_wire(acp.run.wire)


async def test_without_a_key_authenticate_names_the_variable(tmp_path: Path) -> None:
    async with agent_under_test(tmp_path, env={"TEST_KEY": ""}) as acp:
        await acp.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as caught:
            await acp.run.conn.authenticate(method_id="env")
        assert caught.value.code == -32000  # Authentication required
        assert "TEST_KEY" in str(caught.value.data)
        assert "toolwire login" in str(caught.value.data)
        check_wire(acp.run.wire)


@pytest.mark.e2e
async def test_login_in_a_terminal_stores_a_key_the_agent_then_uses(tmp_path: Path) -> None:
    env = environment(tmp_path, TEST_KEY="", TOOLWIRE_KEYRING="off")
    config = tmp_path / "config.toml"
    config.write_text(
        'default_backend = "fake"\n[backends.fake]\nprovider = "anthropic"\n'
        'model = "claude-test"\nbase_url = "http://model.test"\napi_key_env = "TEST_KEY"\n',
        encoding="utf-8",
    )
    # What the client runs for the terminal method: the agent's command plus its args.
    done = _toolwire(env, "acp", "--config", str(config), "--login", answers=f"fake\n{KEY}\n")
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout + done.stderr
    keys = tmp_path / "config" / "toolwire" / "keys.json"
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    async with agent_under_test(tmp_path, env={"TEST_KEY": "", "TOOLWIRE_KEYRING": "off"}) as acp:
        acp.model.function = lambda request: "Hello."
        await acp.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await acp.run.conn.authenticate(method_id="env")
        sid = await acp.start()
        assert (await acp.prompt(sid, "Hi")).stop_reason == "end_turn"
        # The stored key is the one the provider was sent.
        assert acp.model.headers[-1]["x-api-key"] == KEY
    logout = _toolwire(env, "logout", "fake", "--config", str(config))
    assert logout.returncode == 0, logout.stderr
    assert "TEST_KEY" not in keys.read_text(encoding="utf-8")


def _toolwire(
    env: dict[str, str], *args: str, answers: str = ""
) -> subprocess.CompletedProcess[str]:
    """``toolwire ARGS`` in a process of its own, ``answers`` on its standard input."""
    return subprocess.run(
        [sys.executable, "-m", "toolwire", *args],
        input=answers,
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=60,
        check=False,
    )

"""A bad configuration reaches the editor: ``toolwire acp`` answers ``initialize``, stays
up, and answers ``session/new`` and ``authenticate`` with the file, the line and the fix
(the official Python SDK client, on a real process); the same line is on stderr."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION
from acp.exceptions import RequestError
from acp.schema import ClientCapabilities, Implementation

from tests.agent.support import ScriptedClient, environment, spawn_agent

CASES = [
    (
        "[limits]\nmax_turn_request = 3\n",
        "config.toml, line 2: unknown key 'max_turn_request' in [limits]; "
        "did you mean 'max_turn_requests'?",
    ),
    (
        'mode = "ask"\n\n[backends.claude]\nprovider = "anthropic"\nmodle = "m"\n',
        "config.toml, line 5: unknown key 'modle' in [backends.claude]; did you mean 'model'?",
    ),
    (
        'mode = "ask"\n[limits\nmax_tokens = 3\n',
        "config.toml, line 2: invalid TOML: Expected ']' at the end of a table declaration",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_a_bad_config_is_the_error_of_session_new(tmp_path: Path, text: str, expected: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    env = environment(tmp_path, TOOLWIRE_CONFIG=str(config))

    async def scenario() -> list[str]:
        async with spawn_agent(tmp_path, ScriptedClient(), env=env) as run:
            init = await run.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="toolwire-tests", version="0"),
            )
            assert init.agent_info is not None
            assert init.agent_info.name == "toolwire"
            errors: list[str] = []
            for _ in range(2):  # it stays up: asked again, it answers again
                with pytest.raises(RequestError) as new:
                    await run.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
                errors.append(str(new.value))
            with pytest.raises(RequestError) as auth:
                await run.conn.authenticate(method_id="env")
            errors.append(str(auth.value))
            assert run.process.returncode is None
            return errors

    errors = asyncio.run(scenario())
    for error in errors:
        assert f"{config.parent}/{expected}" in error
    stderr = (tmp_path / "agent-0.log").read_text(encoding="utf-8")
    assert f"toolwire: {config.parent}/{expected}" in stderr

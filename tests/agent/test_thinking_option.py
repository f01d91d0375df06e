"""The ``thought_level`` config option: offered, changed, sent, kept, and streamed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.exceptions import RequestError

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    fake_backend,
    project,
    response,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply


def _option(options: list[Any], option_id: str) -> dict[str, Any]:
    dumped = [o.model_dump(by_alias=True, exclude_none=True) for o in options]
    return next(o for o in dumped if o["id"] == option_id)


def test_the_level_is_a_config_option_sent_as_thinking_and_kept(tmp_path: Path) -> None:
    root = project(tmp_path)
    replies = [
        response(("thinking", "Short think."), ("text", "Hello.")),
        response(("text", "Again."), n=1),
    ]
    with FakeServer() as server:
        server.script(*(Reply(chunks=[r.encode()]) for r in replies))
        extra = 'thought_level = "low"\n'
        config = write_config(tmp_path, fake_backend(server.url) + extra)
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            client = ScriptedClient()
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                await run.conn.initialize(protocol_version=1)
                new = await run.conn.new_session(cwd=str(root), mcp_servers=[])
                sid = new.session_id
                level = _option(new.config_options or [], "thought_level")
                assert level["category"] == "thought_level"
                assert level["currentValue"] == "low"  # the backend's default
                assert [o["value"] for o in level["options"]] == ["off", "low", "medium", "high"]
                await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
                assert text_of(run.notifications(), "agent_thought_chunk") == "Short think."
                answer = await run.conn.set_config_option(
                    config_id="thought_level", session_id=sid, value="high"
                )
                assert _option(answer.config_options, "thought_level")["currentValue"] == "high"
                await run.conn.prompt(session_id=sid, prompt=[text_block("again")])
                check_wire(run.wire)
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                await start(run.conn, root)
                loaded = await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                kept = _option(loaded.config_options or [], "thought_level")
                assert kept["currentValue"] == "high"

        asyncio.run(scenario())
    first, second = (r.json() for r in server.requests)
    max_tokens = first["max_tokens"]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": min(2048, max_tokens - 1024)}
    assert second["thinking"] == {"type": "enabled", "budget_tokens": min(24576, max_tokens - 1024)}
    assert "temperature" not in second
    # The signed thinking of the first turn goes back to the backend that wrote it.
    thought = second["messages"][1]["content"][0]
    assert thought == {"type": "thinking", "thinking": "Short think.", "signature": "sig-test"}


def test_an_unknown_level_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path)
    with FakeServer() as server:
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                with pytest.raises(RequestError) as refused:
                    await run.conn.set_config_option(
                        config_id="thought_level", session_id=sid, value="max"
                    )
                assert refused.value.code == -32602
                check_wire(run.wire)

        asyncio.run(scenario())
    assert server.requests == []

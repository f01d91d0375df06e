"""An MCP server whose tool list is hostile, in a real ACP session on a scripted
Anthropic-compatible server: the session's other tools keep working."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import McpServerStdio

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    calls_by_id,
    environment,
    fake_backend,
    response,
    write_config,
)
from tests.fakes.http import FakeServer, Reply
from tests.mcp.support import SCHEMAS

pytestmark = pytest.mark.e2e


def test_a_tool_whose_schema_loops_does_not_break_the_prompt_and_its_neighbour_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    server_spec = McpServerStdio(
        name="hostile", command=sys.executable, args=[str(SCHEMAS), "loop"], env=[]
    )
    call = ("tool", "mcp__hostile__echo", {"text": "still here"}, "toolu_echo")
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(call).encode()]),
            Reply(chunks=[response(("text", "Done."), n=1).encode()]),
        )
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient(answers=["allow_once"])

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                await run.conn.initialize(protocol_version=1)
                session = await run.conn.new_session(cwd=str(root), mcp_servers=[server_spec])
                sid = str(session.session_id)
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("echo")])
                assert done.stop_reason == "end_turn"
                card = calls_by_id(run.notifications())["toolu_echo"]
                assert card["status"] == "completed"
                assert "still here" in json.dumps(card["content"])

        asyncio.run(scenario())
        offered = {t["name"]: t for t in server.requests[0].json()["tools"]}
        assert "mcp__hostile__echo" in offered
        looped = offered["mcp__hostile__looped"]["input_schema"]
        assert looped["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf"} & set(looped)  # Anthropic refuses them on top
        answer = json.dumps(server.requests[1].json()["messages"][-1])
        assert "still here" in answer

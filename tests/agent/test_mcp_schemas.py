"""An MCP server whose tool list is hostile, in a real ACP session on the ``acp``
fixture's model: the session's other tools keep working."""

from __future__ import annotations

import json
import sys

import pytest
from acp.schema import McpServerStdio

from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer, calls_by_id, check_wire
from tests.mcp.support import SCHEMAS

# e2e: the MCP server is a real process.
pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_a_tool_whose_schema_loops_does_not_break_the_prompt_and_its_neighbour_runs(
    acp: AgentUnderTest,
) -> None:
    server_spec = McpServerStdio(
        name="hostile", command=sys.executable, args=[str(SCHEMAS), "loop"], env=[]
    )
    call = ("tool", "mcp__hostile__echo", {"text": "still here"}, "toolu_echo")
    acp.model.script(answer(call), "Done.")
    acp.client.answers = ["allow_once"]
    await acp.run.conn.initialize(protocol_version=1)
    session = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[server_spec])
    sid = str(session.session_id)
    done = await acp.prompt(sid, "echo")
    assert done.stop_reason == "end_turn"
    card = calls_by_id(acp.run.notifications())["toolu_echo"]
    assert card["status"] == "completed"
    assert "still here" in json.dumps(card["content"])
    check_wire(acp.run.wire)
    offered = {t["name"]: t for t in acp.model.bodies[0]["tools"]}
    assert "mcp__hostile__echo" in offered
    looped = offered["mcp__hostile__looped"]["input_schema"]
    assert looped["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & set(looped)  # Anthropic refuses them on top
    answered = json.dumps(acp.model.bodies[1]["messages"][-1])
    assert "still here" in answered

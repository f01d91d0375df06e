"""An MCP server's ``elicitation/create`` in an ACP session: asked of the editor as ACP
``elicitation/create`` when it advertises ``elicitation.form``, the answer going back to
the server; declined with a notice when it does not. The server is the test server
``tests/mcp/servers/edge.py`` (its ``ask_name`` tool elicits a name)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    McpServerStdio,
)

from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer, calls_by_id, check_wire, text_of
from tests.mcp.support import EDGE

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

ASK: tuple[Any, ...] = ("tool", "mcp__edge__ask_name", {}, "toolu_ask")
FORMS = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))


async def _session(acp: AgentUnderTest, caps: ClientCapabilities) -> str:
    await acp.run.conn.initialize(protocol_version=1, client_capabilities=caps)
    edge = McpServerStdio(name="edge", command=sys.executable, args=[str(EDGE), "serve"], env=[])
    session = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=[edge])
    return str(session.session_id)


async def test_the_question_reaches_the_editor_and_its_answer_the_server(
    acp: AgentUnderTest,
) -> None:
    acp.model.script(answer(ASK), "Hello, Ada.")
    acp.client.answers = ["allow_once"]
    acp.client.elicit_answer = {"action": "accept", "content": {"name": "Ada"}}
    sid = await _session(acp, FORMS)
    assert (await acp.prompt(sid, "Greet someone")).stop_reason == "end_turn"
    [asked] = acp.client.elicitations
    assert asked["message"] == "Which name should the greeting use?"
    assert asked["sessionId"] == sid
    assert "name" in asked["requestedSchema"]["properties"]
    # The server got the editor's answer, and said so in the tool's result.
    card = calls_by_id(acp.run.notifications())["toolu_ask"]
    assert "accepted: Ada" in json.dumps(card["content"])
    assert "accepted: Ada" in json.dumps(acp.model.bodies[-1]["messages"][-1])
    check_wire(acp.run.wire)


async def test_without_the_capability_the_question_is_declined_with_a_notice(
    acp: AgentUnderTest,
) -> None:
    acp.model.script(answer(ASK), "No name then.")
    acp.client.answers = ["allow_once"]
    sid = await _session(acp, ClientCapabilities())
    assert (await acp.prompt(sid, "Greet someone")).stop_reason == "end_turn"
    assert acp.client.elicitations == []
    assert "answer: decline" in json.dumps(acp.model.bodies[-1]["messages"][-1])
    said = text_of(acp.run.notifications())
    assert "Which name should the greeting use?" in said
    assert "declined" in said
    check_wire(acp.run.wire)

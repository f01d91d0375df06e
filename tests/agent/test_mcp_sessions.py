"""MCP servers in ACP sessions: the official SDK client passes ``mcpServers`` (and the
config names its own), the model (a ``FunctionBackend``) calls their tools, and every
line the agent writes is checked against the ACP schema. Real servers:
``@modelcontextprotocol/server-everything`` (npm, pinned in tests/mcp) and the test
server ``tests/mcp/servers/edge.py`` on the official ``mcp`` SDK."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import EnvVariable, McpServerStdio

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    ScriptedClient,
    agent,
    answer,
    calls_by_id,
    check_wire,
    response,
    text_of,
)
from tests.mcp.support import EDGE, assert_gone, everything_script, groups
from toolwire.testing import streams

# The agent runs in this process; the MCP servers are real processes.
pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

MINE = f'\n[mcp_servers.mine]\ncommand = "{sys.executable}"\nargs = ["{EDGE}", "serve"]\n'


def _everything() -> McpServerStdio:
    return McpServerStdio(
        name="everything", command="node", args=[str(everything_script())], env=[]
    )


def _edge(marks: Path) -> McpServerStdio:
    env = [EnvVariable(name="EDGE_MARKS", value=str(marks))]
    return McpServerStdio(name="edge", command=sys.executable, args=[str(EDGE), "serve"], env=env)


async def _open(acp: AgentUnderTest, servers: list[Any]) -> str:
    await acp.run.conn.initialize(protocol_version=1)
    session = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=servers)
    return str(session.session_id)


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def _last_message(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][-1])


async def test_an_editor_server_tool_is_offered_named_asked_and_run(tmp_path: Path) -> None:
    call = ("tool", "mcp__everything__get-sum", {"a": 2, "b": 3}, "toolu_sum")
    async with agent_under_test(tmp_path) as acp:
        acp.model.script(answer(call), "It is 5.")
        acp.client.answers = ["allow_once"]
        sid = await _open(acp, [_everything()])
        done = await acp.prompt(sid, "2+3?")
        assert done.stop_reason == "end_turn"
        pgids = groups(acp.run.agent._sessions[sid].services.mcp)
        assert pgids
        card = calls_by_id(acp.run.notifications())["toolu_sum"]
        assert card["status"] == "completed"
        assert card["title"].startswith("Get Sum") or "get-sum" in card["title"]
        assert "The sum of 2 and 3 is 5." in json.dumps(card["content"])
        assert len(acp.client.permissions) == 1  # not read-only: it asked
        check_wire(acp.run.wire)
    assert_gone(pgids)  # the agent's exit stopped the server's whole process group
    offered = {t["name"]: t for t in acp.model.bodies[0]["tools"]}
    assert "mcp__everything__get-sum" in offered
    assert offered["Read"]  # next to the built-in tools
    assert "The sum of 2 and 3 is 5." in _last_message(acp.model.bodies[1])


async def test_progress_is_shown_and_a_cancel_reaches_the_server(acp: AgentUnderTest) -> None:
    marks = acp.tmp_path / "marks.txt"
    acp.model.script(answer(("tool", "mcp__edge__wait", {"seconds": 30}, "toolu_wait")))
    acp.client.answers = ["allow_once"]
    sid = await _open(acp, [_edge(marks)])
    turn = asyncio.create_task(acp.prompt(sid, "wait"))
    for _ in range(200):
        shown = json.dumps(_updates(acp.run.notifications(), "tool_call_update"))
        if "waiting (" in shown:
            break
        await asyncio.sleep(0.05)
    assert "waiting (" in shown  # the server's progress, on the card
    await acp.run.conn.cancel(session_id=sid)
    done = await asyncio.wait_for(turn, 10)
    assert done.stop_reason == "cancelled"
    assert calls_by_id(acp.run.notifications())["toolu_wait"]["status"] == "failed"
    for _ in range(100):
        if marks.exists() and "cancelled" in marks.read_text():
            break
        await asyncio.sleep(0.05)
    assert "cancelled" in marks.read_text()  # the MCP cancellation arrived
    check_wire(acp.run.wire)


async def test_a_trusted_read_only_tool_runs_without_asking_and_read_only_mode_refuses_the_rest(
    tmp_path: Path,
) -> None:
    echo = ("tool", "mcp__mine__echo", {"text": "hello"}, "toolu_echo")
    crash: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_crash")
    config, env = MINE + "trusted = true\n", {"TOOLWIRE_MODE": "read-only"}
    async with agent_under_test(tmp_path, config=config, env=env) as acp:
        acp.model.script(answer(echo, crash), "done")
        sid = await _open(acp, [])
        done = await acp.prompt(sid, "go")
        assert done.stop_reason == "end_turn"
        cards = calls_by_id(acp.run.notifications())
        assert cards["toolu_echo"]["status"] == "completed"
        assert cards["toolu_echo"]["kind"] == "read"
        assert cards["toolu_crash"]["status"] == "failed"
        assert acp.client.permissions == []  # nothing asked
        check_wire(acp.run.wire)
    results = _last_message(acp.model.bodies[1])
    assert "hello" in results
    assert "read-only mode" in results


async def test_a_server_that_does_not_start_is_told_and_the_session_goes_on(
    acp: AgentUnderTest,
) -> None:
    broken = McpServerStdio(
        name="broken", command=str(acp.tmp_path / "no-such-server"), args=[], env=[]
    )
    acp.model.script("Still here.")
    sid = await _open(acp, [broken])
    done = await acp.prompt(sid, "hi")
    assert done.stop_reason == "end_turn"
    said = text_of(acp.run.notifications())
    assert "MCP server 'broken' did not start" in said
    assert "Still here." in said
    check_wire(acp.run.wire)
    names = [t["name"] for t in acp.model.bodies[0]["tools"]]
    assert not any(n.startswith("mcp__broken") for n in names)


async def test_a_replayed_session_calls_a_server_tool(tmp_path: Path) -> None:
    """A replay cassette (``--backend replay:``) drives an editor's server tool too."""
    echo = ("tool", "mcp__everything__echo", {"message": "from the cassette"}, "toolu_echo")
    cassette = streams.write_cassette(
        tmp_path / "mcp.jsonl", [response(echo), response(("text", "Echoed."), n=1)]
    )
    client = ScriptedClient(answers=["allow_always"])
    (tmp_path / "project").mkdir()
    async with agent(tmp_path, client, "--backend", f"replay:{cassette}") as run:
        await run.conn.initialize(protocol_version=1)
        session = await run.conn.new_session(
            cwd=str(tmp_path / "project"), mcp_servers=[_everything()]
        )
        sid = session.session_id
        done = await run.conn.prompt(session_id=sid, prompt=[text_block("echo")])
        assert done.stop_reason == "end_turn"
        card = calls_by_id(run.notifications())["toolu_echo"]
        assert card["status"] == "completed"
        assert "Echo: from the cassette" in json.dumps(card["content"])
        assert run.agent._sessions[sid].rules.always == {"mcp__everything__echo"}
        check_wire(run.wire)


async def test_an_image_from_a_server_tool_reaches_a_model_that_takes_images(
    acp: AgentUnderTest,
) -> None:
    call: tuple[str, str, dict[str, Any], str] = (
        "tool",
        "mcp__everything__get-tiny-image",
        {},
        "toolu_img",
    )
    acp.model.script(answer(call), "A tiny image.")
    acp.client.answers = ["allow_once"]
    sid = await _open(acp, [_everything()])
    await acp.prompt(sid, "show me")
    card = calls_by_id(acp.run.notifications())["toolu_img"]
    assert '"type": "image"' in json.dumps(card["content"])  # the editor's view
    check_wire(acp.run.wire)
    (result,) = [
        block
        for block in acp.model.bodies[1]["messages"][-1]["content"]
        if block["type"] == "tool_result"
    ]
    images = [b for b in result["content"] if b["type"] == "image"]
    assert len(images) == 1
    assert images[0]["source"]["media_type"] == "image/png"


async def test_a_server_tool_rejected_for_good_is_refused_in_the_built_in_tools_words(
    tmp_path: Path,
) -> None:
    """ "Always reject" reads the same for an MCP tool as for ``Bash`` (test_modes): the
    model is told not to retry, then not to call the tool again."""
    first: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_1")
    again: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_2")
    async with agent_under_test(tmp_path, config=MINE) as acp:
        acp.model.script(answer(first), answer(again), "I will stop.")
        acp.client.answers = ["reject_always"]
        sid = await _open(acp, [])
        done = await acp.prompt(sid, "go")
        assert done.stop_reason == "end_turn"
        assert len(acp.client.permissions) == 1  # asked once, for the first call
        assert calls_by_id(acp.run.notifications())["toolu_2"]["status"] == "failed"
        check_wire(acp.run.wire)
    rejected = _last_message(acp.model.bodies[1])
    assert "The user rejected this mcp__mine__crash call; nothing was changed." in rejected
    assert "Do not retry it as is" in rejected
    refused = _last_message(acp.model.bodies[2])
    assert "always reject mcp__mine__crash" in refused
    assert "Do not call it again" in refused

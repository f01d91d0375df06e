"""MCP servers in ACP sessions: the official SDK client passes ``mcpServers`` (and the
config names its own), a scripted Anthropic-compatible server calls their tools, and
every line the agent writes is checked against the ACP schema. Real servers:
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

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    calls_by_id,
    check_wire,
    environment,
    fake_backend,
    response,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply
from tests.mcp.support import EDGE, assert_gone, everything_script, groups
from toolwire.testing import streams

pytestmark = pytest.mark.e2e


def _everything() -> McpServerStdio:
    return McpServerStdio(
        name="everything", command="node", args=[str(everything_script())], env=[]
    )


def _edge(marks: Path) -> McpServerStdio:
    env = [EnvVariable(name="EDGE_MARKS", value=str(marks))]
    return McpServerStdio(name="edge", command=sys.executable, args=[str(EDGE), "serve"], env=env)


async def _open(run: Any, root: Path, servers: list[Any]) -> str:
    await run.conn.initialize(protocol_version=1)
    session = await run.conn.new_session(cwd=str(root), mcp_servers=servers)
    return str(session.session_id)


def _updates(notes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [n["params"]["update"] for n in notes if n["params"]["update"]["sessionUpdate"] == kind]


def test_an_editor_server_tool_is_offered_named_asked_and_run(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    call = ("tool", "mcp__everything__get-sum", {"a": 2, "b": 3}, "toolu_sum")
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(call).encode()]),
            Reply(chunks=[response(("text", "It is 5."), n=1).encode()]),
        )
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient(answers=["allow_once"])

        async def scenario() -> list[int]:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await _open(run, root, [_everything()])
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("2+3?")])
                assert done.stop_reason == "end_turn"
                pgids = groups(run.agent._sessions[sid].mcp)
                assert pgids
                card = calls_by_id(run.notifications())["toolu_sum"]
                assert card["status"] == "completed"
                assert card["title"].startswith("Get Sum") or "get-sum" in card["title"]
                assert "The sum of 2 and 3 is 5." in json.dumps(card["content"])
                assert len(client.permissions) == 1  # not read-only: it asked
                check_wire(run.wire)
                return pgids

        pgids = asyncio.run(scenario())
        assert_gone(pgids)  # the agent's exit stopped the server's whole process group
        offered = {t["name"]: t for t in server.requests[0].json()["tools"]}
        assert "mcp__everything__get-sum" in offered
        assert offered["Read"]  # next to the built-in tools
        answer = json.dumps(server.requests[1].json()["messages"][-1])
        assert "The sum of 2 and 3 is 5." in answer


def test_progress_is_shown_and_a_cancel_reaches_the_server(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    marks = tmp_path / "marks.txt"
    call = ("tool", "mcp__edge__wait", {"seconds": 30}, "toolu_wait")
    with FakeServer() as server:
        server.script(Reply(chunks=[response(call).encode()]))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient(answers=["allow_once"])

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await _open(run, root, [_edge(marks)])
                turn = asyncio.create_task(
                    run.conn.prompt(session_id=sid, prompt=[text_block("wait")])
                )
                for _ in range(200):
                    shown = json.dumps(_updates(run.notifications(), "tool_call_update"))
                    if "waiting (" in shown:
                        break
                    await asyncio.sleep(0.05)
                assert "waiting (" in shown  # the server's progress, on the card
                await run.conn.cancel(session_id=sid)
                done = await asyncio.wait_for(turn, 10)
                assert done.stop_reason == "cancelled"
                assert calls_by_id(run.notifications())["toolu_wait"]["status"] == "failed"
                for _ in range(100):
                    if marks.exists() and "cancelled" in marks.read_text():
                        break
                    await asyncio.sleep(0.05)
                assert "cancelled" in marks.read_text()  # the MCP cancellation arrived
                check_wire(run.wire)

        asyncio.run(scenario())


def test_a_trusted_read_only_tool_runs_without_asking_and_read_only_mode_refuses_the_rest(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    echo = ("tool", "mcp__mine__echo", {"text": "hello"}, "toolu_echo")
    crash: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_crash")
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(echo, crash).encode()]),
            Reply(chunks=[response(("text", "done"), n=1).encode()]),
        )
        table = (
            f'\n[mcp_servers.mine]\ncommand = "{sys.executable}"\nargs = ["{EDGE}", "serve"]\n'
            "trusted = true\n"
        )
        config = write_config(tmp_path, fake_backend(server.url) + table)
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient()

        async def scenario() -> None:
            async with agent(
                tmp_path, client, "--config", str(config), "--mode", "read-only", env=env
            ) as run:
                sid = await _open(run, root, [])
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("go")])
                assert done.stop_reason == "end_turn"
                cards = calls_by_id(run.notifications())
                assert cards["toolu_echo"]["status"] == "completed"
                assert cards["toolu_echo"]["kind"] == "read"
                assert cards["toolu_crash"]["status"] == "failed"
                assert client.permissions == []  # nothing asked
                check_wire(run.wire)

        asyncio.run(scenario())
        results = json.dumps(server.requests[1].json()["messages"][-1])
        assert "hello" in results
        assert "read-only mode" in results


def test_a_server_that_does_not_start_is_told_and_the_session_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    broken = McpServerStdio(
        name="broken", command=str(tmp_path / "no-such-server"), args=[], env=[]
    )
    with FakeServer() as server:
        server.script(Reply(chunks=[response(("text", "Still here."), n=0).encode()]))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await _open(run, root, [broken])
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
                assert done.stop_reason == "end_turn"
                said = text_of(run.notifications())
                assert "MCP server 'broken' did not start" in said
                assert "Still here." in said
                check_wire(run.wire)

        asyncio.run(scenario())
        names = [t["name"] for t in server.requests[0].json()["tools"]]
        assert not any(n.startswith("mcp__broken") for n in names)


def test_a_replayed_session_calls_a_server_tool(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    echo = ("tool", "mcp__everything__echo", {"message": "from the cassette"}, "toolu_echo")
    cassette = streams.write_cassette(
        tmp_path / "mcp.jsonl",
        [response(echo), response(("text", "Echoed."), n=1)],
    )
    client = ScriptedClient(answers=["allow_always"])

    async def scenario() -> None:
        async with agent(tmp_path, client, "--backend", f"replay:{cassette}") as run:
            sid = await _open(run, root, [_everything()])
            done = await run.conn.prompt(session_id=sid, prompt=[text_block("echo")])
            assert done.stop_reason == "end_turn"
            card = calls_by_id(run.notifications())["toolu_echo"]
            assert card["status"] == "completed"
            assert "Echo: from the cassette" in json.dumps(card["content"])
            assert run.agent._sessions[sid].always == {"mcp__everything__echo"}
            check_wire(run.wire)

    asyncio.run(scenario())


def test_an_image_from_a_server_tool_reaches_a_model_that_takes_images(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    call: tuple[str, str, dict[str, Any], str] = (
        "tool",
        "mcp__everything__get-tiny-image",
        {},
        "toolu_img",
    )
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(call).encode()]),
            Reply(chunks=[response(("text", "A tiny image."), n=1).encode()]),
        )
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            client = ScriptedClient(answers=["allow_once"])
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await _open(run, root, [_everything()])
                await run.conn.prompt(session_id=sid, prompt=[text_block("show me")])
                card = calls_by_id(run.notifications())["toolu_img"]
                assert '"type": "image"' in json.dumps(card["content"])  # the editor's view
                check_wire(run.wire)

        asyncio.run(scenario())
        (result,) = [
            block
            for block in server.requests[1].json()["messages"][-1]["content"]
            if block["type"] == "tool_result"
        ]
        images = [b for b in result["content"] if b["type"] == "image"]
        assert len(images) == 1
        assert images[0]["source"]["media_type"] == "image/png"


def test_a_server_tool_rejected_for_good_is_refused_in_the_built_in_tools_words(
    tmp_path: Path,
) -> None:
    """ "Always reject" reads the same for an MCP tool as for ``Bash`` (test_modes): the
    model is told not to retry, then not to call the tool again."""
    root = tmp_path / "project"
    root.mkdir()
    first: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_1")
    again: tuple[str, str, dict[str, Any], str] = ("tool", "mcp__mine__crash", {}, "toolu_2")
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(first).encode()]),
            Reply(chunks=[response(again, n=1).encode()]),
            Reply(chunks=[response(("text", "I will stop."), n=2).encode()]),
        )
        table = f'\n[mcp_servers.mine]\ncommand = "{sys.executable}"\nargs = ["{EDGE}", "serve"]\n'
        config = write_config(tmp_path, fake_backend(server.url) + table)
        env = environment(tmp_path, TEST_KEY=KEY)
        client = ScriptedClient(answers=["reject_always"])

        async def scenario() -> None:
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await _open(run, root, [])
                done = await run.conn.prompt(session_id=sid, prompt=[text_block("go")])
                assert done.stop_reason == "end_turn"
                assert len(client.permissions) == 1  # asked once, for the first call
                assert calls_by_id(run.notifications())["toolu_2"]["status"] == "failed"
                check_wire(run.wire)

        asyncio.run(scenario())
        rejected = json.dumps(server.requests[1].json()["messages"][-1])
        assert "The user rejected this mcp__mine__crash call; nothing was changed." in rejected
        assert "Do not retry it as is" in rejected
        refused = json.dumps(server.requests[2].json()["messages"][-1])
        assert "always reject mcp__mine__crash" in refused
        assert "Do not call it again" in refused

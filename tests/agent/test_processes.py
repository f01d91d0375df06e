"""``toolwire acp`` as a real process, where the process is the point.

A full turn through ``python -m toolwire acp`` (with ``--record`` and ``--log-file``),
SIGTERM at shutdown, and a restart: a second process that loads, lists, resumes and
closes what the first one stored. Driven by the official Python SDK client; every
message the agents wrote is validated against the ACP v1 schema.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.exceptions import RequestError

from tests.agent.support import (
    APP,
    KEY,
    ScriptedClient,
    agent,
    alive,
    calls_by_id,
    check_full_turn,
    check_wire,
    environment,
    fake_backend,
    full_turn_cassette,
    project,
    response,
    spawn_agent,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply
from toolwire.agent.store.database import SessionDatabase
from toolwire.testing.streams import write_cassette

pytestmark = pytest.mark.e2e


def test_full_turn_through_the_cli_process(tmp_path: Path) -> None:
    """``python -m toolwire acp`` with --record and --log-file, as an editor runs it."""
    root = project(tmp_path)
    cassette = full_turn_cassette(tmp_path)
    client = ScriptedClient(answers=["allow_once", "allow_once"])
    recorded, log = tmp_path / "recorded.jsonl", tmp_path / "toolwire.log"
    options = ["--record", str(recorded), "--log-file", str(log)]

    async def scenario() -> None:
        async with spawn_agent(
            tmp_path, client, "--backend", f"replay:{cassette}", *options
        ) as run:
            sid = await start(run.conn, root)
            result = await run.conn.prompt(session_id=sid, prompt=[text_block("Say hello")])
            assert result.stop_reason == "end_turn"
            notes = run.notifications()
            assert check_wire(run.wire) > 10
            check_full_turn(root, notes, client)

    asyncio.run(scenario())
    assert (root / "app.py").read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    # --record wrote one cassette line per model response, the bodies as served
    lines = [json.loads(line) for line in recorded.read_text(encoding="utf-8").splitlines()]
    originals = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines()]
    assert [r["body"] for r in lines] == [o["body"] for o in originals]
    assert "serving on stdio" in log.read_text(encoding="utf-8")


@pytest.mark.slow
def test_sigterm_leaves_no_command_behind(tmp_path: Path) -> None:
    """What SDK clients do at shutdown (stdin closed, then SIGTERM) kills our commands."""
    root = project(tmp_path)
    command = "echo $$ > shell.pid; sleep 30 & echo $! > sleep.pid; wait"
    cassette = write_cassette(
        tmp_path / "bash.jsonl", [response(("tool", "Bash", {"command": command}, "toolu_t"))]
    )
    client = ScriptedClient(answers=["allow_once"])

    async def scenario() -> None:
        async with spawn_agent(tmp_path, client, "--backend", f"replay:{cassette}") as run:
            sid = await start(run.conn, root)
            prompt = asyncio.get_running_loop().create_task(
                run.conn.prompt(session_id=sid, prompt=[text_block("Run it")])
            )
            while not (root / "sleep.pid").exists() or not (root / "sleep.pid").read_text():
                await asyncio.sleep(0.02)
            run.process.terminate()
            assert await asyncio.wait_for(run.process.wait(), 5) is not None
            prompt.cancel()

    asyncio.run(scenario())
    for name in ("shell.pid", "sleep.pid"):
        assert not alive(int((root / name).read_text())), f"{name}: outlived the agent"


@pytest.mark.slow
def test_load_after_restart_list_resume_close(tmp_path: Path) -> None:
    root = project(tmp_path)
    cassette = full_turn_cassette(tmp_path)
    first = ScriptedClient(answers=["allow_always", "allow_always"])

    async def before_restart() -> str:
        async with spawn_agent(tmp_path, first, "--backend", f"replay:{cassette}") as run:
            sid = await start(run.conn, root)
            result = await run.conn.prompt(session_id=sid, prompt=[text_block("Say hello")])
            assert result.stop_reason == "end_turn"
            check_wire(run.wire)
            return sid

    sid = asyncio.run(before_restart())
    with FakeServer() as server:
        server.script(Reply(chunks=[response(("text", "Yes, it says hello now.")).encode()]))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        second = ScriptedClient()
        asyncio.run(_after_restart(tmp_path, second, config, env, sid, root))
        history = server.requests[0].json()["messages"]
    # the new backend got the whole history: the calls, their results, the new prompt
    kinds = [block["type"] for m in history for block in _blocks(m)]
    assert kinds.count("tool_use") == 3
    assert kinds.count("tool_result") == 3
    assert history[-1]["content"][-1]["text"] == "Did it work?"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


async def _after_restart(
    tmp_path: Path,
    client: ScriptedClient,
    config: Path,
    env: dict[str, str],
    sid: str,
    root: Path,
) -> None:
    async with spawn_agent(tmp_path, client, "--config", str(config), env=env) as run:
        await run.conn.initialize(protocol_version=1)
        listed = await run.conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [sid]
        assert listed.sessions[0].title == "Say hello"
        assert listed.sessions[0].cwd == str(root)
        assert (await run.conn.list_sessions(cwd=str(tmp_path))).sessions == []
        loaded = await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
        assert loaded.modes is not None
        assert loaded.modes.current_mode_id == "ask"
        replayed = run.notifications()
        kinds = [n["params"]["update"]["sessionUpdate"] for n in replayed]
        assert kinds[0] == "user_message_chunk"
        assert "tool_call_update" not in kinds, "the transcript is consolidated"
        calls = calls_by_id(replayed)
        assert [c["status"] for c in calls.values()] == ["completed"] * 3
        assert calls["toolu_edit"]["content"][0]["oldText"] == APP
        assert "Done: greet() now says hello." in text_of(replayed)
        result = await run.conn.prompt(session_id=sid, prompt=[text_block("Did it work?")])
        assert result.stop_reason == "end_turn"
        assert "Yes, it says hello now." in text_of(run.notifications())
        await run.conn.resume_session(cwd=str(root), session_id=sid, mcp_servers=[])
        await run.conn.close_session(session_id=sid)
        with pytest.raises(RequestError):
            await run.conn.prompt(session_id=sid, prompt=[text_block("closed?")])
        with pytest.raises(RequestError):
            await run.conn.load_session(cwd=str(root), session_id="nope", mcp_servers=[])
        check_wire(run.wire)


@pytest.mark.slow
def test_a_killed_agent_issued_ids_are_not_issued_again(tmp_path: Path) -> None:
    """An agent killed mid-step (its calls shown, the step not yet saved) leaves their ids
    on disk: the next agent (in this process, on the same database) gives a provider's
    repeat of one another id."""
    root = project(tmp_path)
    write = ("tool", "Write", {"file_path": "new.txt", "content": "x"}, "call_0")
    first = write_cassette(tmp_path / "first.jsonl", [response(write)])
    again = write_cassette(
        tmp_path / "again.jsonl",
        [response(("tool", "Read", {"file_path": "app.py"}, "call_0")), response(("text", "ok"))],
    )
    client = ScriptedClient(answers=["wait"])  # the permission is never answered

    async def killed_mid_step() -> str:
        async with spawn_agent(tmp_path, client, "--backend", f"replay:{first}") as run:
            sid = await start(run.conn, root)
            prompt = asyncio.get_running_loop().create_task(
                run.conn.prompt(session_id=sid, prompt=[text_block("Write it")])
            )
            while not client.permissions:
                await asyncio.sleep(0.02)
            assert client.permissions[0].tool_call_id == "call_0"
            data = tmp_path / "data" / "toolwire" / "sessions.db"
            for _ in range(250):  # the id is written as it is issued, not at the step's end
                with SessionDatabase(data) as db:
                    if "call_0" in db.call_ids(sid):
                        break
                await asyncio.sleep(0.02)
            run.process.kill()
            await run.process.wait()
            prompt.cancel()
            client.cancelled.set()
            return sid

    async def next_agent(sid: str) -> list[str]:
        second = ScriptedClient()
        async with agent(tmp_path, second, "--backend", f"replay:{again}") as run:
            await run.conn.initialize(protocol_version=1)
            await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            before = len(run.notifications())
            result = await run.conn.prompt(session_id=sid, prompt=[text_block("Read it")])
            assert result.stop_reason == "end_turn"
            check_wire(run.wire)
            return list(calls_by_id(run.notifications()[before:]))

    sid = asyncio.run(killed_mid_step())
    issued = asyncio.run(next_agent(sid))
    assert len(issued) == 1
    assert issued != ["call_0"]
    assert not (root / "new.txt").exists()

"""``session/delete`` (stable, advertised) and ``session/fork`` (unstable, not advertised)."""

from __future__ import annotations

import asyncio
import sqlite3
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
    write_config,
)
from tests.fakes.http import FakeServer, Reply
from toolwire.testing import InMemoryConnection

NOT_FOUND = -32002


async def _delete(run: InMemoryConnection, session_id: str) -> Any:
    # The SDK's client has no method for it (its schema predates session/delete).
    return await run.conn._conn.send_request("session/delete", {"sessionId": session_id})


def test_delete_removes_the_session_and_its_history(tmp_path: Path) -> None:
    root = project(tmp_path)
    with FakeServer() as server:
        server.script(
            Reply(
                chunks=[
                    response(
                        ("text", "Hi."),
                    ).encode()
                ]
            )
        )
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                init = await run.conn.initialize(protocol_version=1)
                assert init.agent_capabilities is not None
                caps = init.agent_capabilities.session_capabilities
                assert caps is not None
                assert caps.delete is not None
                assert caps.fork is None  # the v1 schema has no field for it
                sid = (await run.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
                await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
                assert await _delete(run, sid) == {}
                listed = await run.conn.list_sessions()
                assert sid not in [s.session_id for s in listed.sessions]
                with pytest.raises(RequestError) as gone:
                    await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                assert gone.value.code == NOT_FOUND
                with pytest.raises(RequestError) as again:
                    await _delete(run, sid)
                assert again.value.code == NOT_FOUND
                check_wire(run.wire)

        asyncio.run(scenario())


def test_fork_carries_the_history_and_leaves_the_source_alone(tmp_path: Path) -> None:
    root = project(tmp_path)
    replies = [
        response(
            ("text", "First answer."),
        ),
        response(("text", "Fork answer."), n=1),
        response(("text", "Source answer."), n=2),
    ]
    with FakeServer() as server:
        server.script(*(Reply(chunks=[r.encode()]) for r in replies))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.set_session_mode(session_id=sid, mode_id="accept-edits")
                await run.conn.set_config_option(
                    config_id="thought_level", session_id=sid, value="medium"
                )
                await run.conn.prompt(session_id=sid, prompt=[text_block("one")])
                fork = await run.conn.fork_session(session_id=sid, cwd=str(root), mcp_servers=[])
                assert fork.session_id != sid
                assert fork.modes is not None
                assert fork.modes.current_mode_id == "accept-edits"
                await run.conn.prompt(session_id=fork.session_id, prompt=[text_block("fork")])
                await run.conn.prompt(session_id=sid, prompt=[text_block("source")])
                with pytest.raises(RequestError) as missing:
                    await run.conn.fork_session(session_id="nope", cwd=str(root), mcp_servers=[])
                assert missing.value.code == NOT_FOUND
                check_wire(run.wire)

        asyncio.run(scenario())
    first, forked, source = (r.json() for r in server.requests)
    texts = [[b.get("text") for b in m["content"]] for m in forked["messages"]]
    assert texts == [["one"], ["First answer."], ["fork"]]
    assert forked["thinking"]["type"] == "enabled"  # the level came along
    # The source's history has its own turn, not the fork's.
    assert [[b.get("text") for b in m["content"]] for m in source["messages"]] == [
        ["one"],
        ["First answer."],
        ["source"],
    ]
    assert first["messages"][0]["content"][0]["text"] == "one"


def test_a_fork_that_fails_halfway_leaves_no_half_session(tmp_path: Path) -> None:
    # A write that fails after the fork's session row (here the history's insert, as a
    # full disk or a killed process would) must not leave a listed session with the
    # source's title and no history: the fork is there whole or not at all.
    root = project(tmp_path)
    with FakeServer() as server:
        server.script(Reply(chunks=[response(("text", "First answer.")).encode()]))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY=KEY)
        db_path = tmp_path / "data" / "toolwire" / "sessions.db"

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                await run.conn.prompt(session_id=sid, prompt=[text_block("one")])
                with sqlite3.connect(db_path) as db:
                    db.execute(
                        "CREATE TRIGGER fail_fork BEFORE INSERT ON messages"
                        f" WHEN NEW.session_id != '{sid}'"
                        " BEGIN SELECT RAISE(ABORT, 'the disk failed'); END"
                    )
                with pytest.raises(RequestError):
                    await run.conn.fork_session(session_id=sid, cwd=str(root), mcp_servers=[])
                listed = await run.conn.list_sessions()
                assert [s.session_id for s in listed.sessions] == [sid]
                with sqlite3.connect(db_path) as db:
                    db.execute("DROP TRIGGER fail_fork")
                fork = await run.conn.fork_session(session_id=sid, cwd=str(root), mcp_servers=[])
                listed = await run.conn.list_sessions()
                assert {s.session_id for s in listed.sessions} == {sid, fork.session_id}
                check_wire(run.wire)

        asyncio.run(scenario())
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id")
        assert sorted(count for _, count in rows) == [2, 2]  # the fork has the whole history

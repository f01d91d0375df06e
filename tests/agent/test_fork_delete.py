"""``session/delete`` (stable, advertised) and ``session/fork`` (unstable, not advertised)."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from acp.exceptions import RequestError

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire
from toolwire.testing import InMemoryConnection

pytestmark = pytest.mark.anyio

NOT_FOUND = -32002


async def _delete(run: InMemoryConnection, session_id: str) -> Any:
    # The SDK's client has no method for it (its schema predates session/delete).
    return await run.conn._conn.send_request("session/delete", {"sessionId": session_id})


async def test_delete_removes_the_session_and_its_history(acp: AgentUnderTest) -> None:
    acp.model.script("Hi.")
    run, root = acp.run, acp.root
    init = await run.conn.initialize(protocol_version=1)
    assert init.agent_capabilities is not None
    caps = init.agent_capabilities.session_capabilities
    assert caps is not None
    assert caps.delete is not None
    assert caps.fork is None  # the v1 schema has no field for it
    sid = (await run.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
    await acp.prompt(sid, "hi")
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


async def test_fork_carries_the_history_and_leaves_the_source_alone(acp: AgentUnderTest) -> None:
    acp.model.script("First answer.", "Fork answer.", "Source answer.")
    run, root = acp.run, acp.root
    sid = await acp.start()
    await run.conn.set_session_mode(session_id=sid, mode_id="accept-edits")
    await run.conn.set_config_option(config_id="thought_level", session_id=sid, value="medium")
    await acp.prompt(sid, "one")
    fork = await run.conn.fork_session(session_id=sid, cwd=str(root), mcp_servers=[])
    assert fork.session_id != sid
    assert fork.modes is not None
    assert fork.modes.current_mode_id == "accept-edits"
    await acp.prompt(fork.session_id, "fork")
    await acp.prompt(sid, "source")
    with pytest.raises(RequestError) as missing:
        await run.conn.fork_session(session_id="nope", cwd=str(root), mcp_servers=[])
    assert missing.value.code == NOT_FOUND
    check_wire(run.wire)
    first, forked, source = acp.model.bodies
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


async def test_a_fork_that_fails_halfway_leaves_no_half_session(acp: AgentUnderTest) -> None:
    # A write that fails after the fork's session row (here the history's insert, as a
    # full disk or a killed process would) must not leave a listed session with the
    # source's title and no history: the fork is there whole or not at all.
    acp.model.script("First answer.")
    run, root = acp.run, acp.root
    db_path = acp.tmp_path / "data" / "toolwire" / "sessions.db"
    sid = await acp.start()
    await acp.prompt(sid, "one")
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
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id")
        assert sorted(count for _, count in rows) == [2, 2]  # the fork has the whole history

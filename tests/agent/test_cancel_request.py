"""``$/cancel_request``: the client cancels one request by its id (ACP "Cancellation").

A ``session/load`` of a large session stops replaying and answers ``-32800``; a
``session/prompt`` ends exactly as ``session/cancel`` ends it: ``stopReason: cancelled``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION
from acp.connection import StreamDirection
from acp.exceptions import RequestError

from tests.agent.pair import AgentUnderTest
from tests.agent.support import check_wire
from toolwire.agent.store.database import SessionDatabase
from toolwire.testing import InMemoryConnection

pytestmark = pytest.mark.anyio

COPIES = 2000


async def _request_id(run: InMemoryConnection, method: str) -> Any:
    """The id of the client's latest ``method`` request, once it is on the wire."""
    for _ in range(500):
        sent = [
            e.message
            for e in run.wire
            if e.direction == StreamDirection.OUTGOING and e.message.get("method") == method
        ]
        if sent:
            return sent[-1]["id"]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {method} request was sent")


async def _cancel_request(run: InMemoryConnection, request_id: Any) -> None:
    # The SDK client has no method for it yet: the notification as the spec writes it.
    await run.conn._conn.send_notification("$/cancel_request", {"requestId": request_id})


def _enlarge(tmp_path: Path, session_id: str) -> int:
    """Make the stored transcript ``COPIES`` times longer; its new length."""
    db = SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db")
    try:
        updates = db.updates(session_id)
        db.append_updates(session_id, updates * COPIES)
        return len(db.updates(session_id))
    finally:
        db.close()


async def test_cancel_request_ends_a_running_load(acp: AgentUnderTest) -> None:
    acp.model.function = lambda request: "word " * 200
    sid = await acp.start()
    await acp.prompt(sid, "Say many words")
    stored = _enlarge(acp.tmp_path, sid)
    async with acp.again() as second:
        conn = second.run.conn
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        replaying = asyncio.Event()  # the cancel goes once the replay is under way
        second.client.on_update = lambda update: replaying.set()
        load = asyncio.create_task(
            conn.load_session(cwd=str(second.root), session_id=sid, mcp_servers=[])
        )
        await asyncio.wait_for(replaying.wait(), 10)
        await _cancel_request(second.run, await _request_id(second.run, "session/load"))
        with pytest.raises(RequestError) as caught:
            await load
        assert caught.value.code == -32800  # Request cancelled
        assert len(second.run.notifications()) < stored, "the replay went on to the end"
        # The agent still serves: the same session loads in full when not cancelled.
        before = len(second.run.notifications())
        await conn.load_session(cwd=str(second.root), session_id=sid, mcp_servers=[])
        assert len(second.run.notifications()) - before >= stored
        check_wire(second.run.wire)


async def test_cancel_request_ends_a_prompt_as_session_cancel_does(acp: AgentUnderTest) -> None:
    acp.model.function = lambda request: "word " * 400
    acp.model.pace = 0.02
    sid = await acp.start()
    streamed = asyncio.Event()
    acp.client.on_update = lambda update: streamed.set()
    prompt = asyncio.create_task(acp.prompt(sid, "Talk"))
    await asyncio.wait_for(streamed.wait(), 10)
    await _cancel_request(acp.run, await _request_id(acp.run, "session/prompt"))
    result = await asyncio.wait_for(prompt, 10)
    assert result.stop_reason == "cancelled"
    # The session takes the next prompt as after any cancel.
    acp.model.pace = 0
    acp.model.function = lambda request: "Back."
    assert (await acp.prompt(sid, "Again")).stop_reason == "end_turn"
    check_wire(acp.run.wire)


async def test_a_cancel_for_a_finished_or_unknown_request_changes_nothing(
    acp: AgentUnderTest,
) -> None:
    acp.model.function = lambda request: "Hello."
    sid = await acp.start()
    assert (await acp.prompt(sid, "Hi")).stop_reason == "end_turn"
    await _cancel_request(acp.run, await _request_id(acp.run, "session/prompt"))
    await _cancel_request(acp.run, "no-such-request")
    assert (await acp.prompt(sid, "Hi again")).stop_reason == "end_turn"
    check_wire(acp.run.wire)

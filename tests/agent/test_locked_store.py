"""Another process holding the write lock on ``sessions.db`` freezes nothing.

Every editor window runs its own ``toolwire acp`` on the same database. Here a second
connection (another window, in effect) takes an exclusive lock while a prompt streams;
a ``session/set_mode`` (a write) waits for it, and meanwhile the stream goes on, the
event loop keeps ticking, and a ``session/cancel`` ends the turn on the wire. Once the
lock is gone, the prompt is answered ``cancelled`` and the waiting write lands.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from acp import text_block

from tests.agent.pair import AgentUnderTest
from tests.agent.support import answer, calls_by_id, check_wire
from toolwire.agent.store.schema import default_db_path
from toolwire.events import Event

#: The longest pause of the event loop we accept while the database is locked (the
#: store's busy timeout is 5 s: a loop blocked on it would pause for the whole lock).
MAX_PAUSE_S = 1.0
LOCK_AT_LEAST_S = 1.5


def _slow_answer() -> list[Event]:
    long_text = "This response streams slowly so that the lock is taken in the middle of it. " * 3
    return answer(
        ("text", long_text),
        ("tool", "Read", {"file_path": "app.py"}, "toolu_l1"),
        ("tool", "Write", {"file_path": "out.txt", "content": "never " * 200}, "toolu_l2"),
    )


async def _heartbeat(pauses: list[float]) -> None:
    loop = asyncio.get_running_loop()
    last = loop.time()
    while True:
        await asyncio.sleep(0.01)
        now = loop.time()
        pauses.append(now - last)
        last = now


@pytest.mark.anyio
async def test_a_locked_database_freezes_neither_streaming_nor_cancel(acp: AgentUnderTest) -> None:
    acp.model.script(_slow_answer())
    acp.model.chunk_size, acp.model.pace = 60, 0.02
    client, run = acp.client, acp.run
    sid = await acp.start()
    loop = asyncio.get_running_loop()
    locked = asyncio.Event()
    tool_call_seen = asyncio.Event()
    chunks_while_locked: list[Any] = []
    lock = sqlite3.connect(default_db_path(), isolation_level=None)

    def on_update(update: Any) -> None:
        kind = update.session_update
        if kind == "agent_message_chunk" and not locked.is_set():
            lock.execute("BEGIN EXCLUSIVE")  # what a second window's write holds
            locked.set()
        elif kind == "agent_message_chunk":
            chunks_while_locked.append(update)
        elif kind == "tool_call":
            tool_call_seen.set()

    client.on_update = on_update
    pauses: list[float] = []
    beat = loop.create_task(_heartbeat(pauses))
    prompt = loop.create_task(run.conn.prompt(session_id=sid, prompt=[text_block("Go")]))
    try:
        await asyncio.wait_for(locked.wait(), 10)
        locked_at = loop.time()
        write = loop.create_task(run.conn.set_session_mode(session_id=sid, mode_id="accept-edits"))
        await asyncio.wait_for(tool_call_seen.wait(), 10)
        await run.conn.cancel(session_id=sid)
        await asyncio.wait_for(_cancelled_on_the_wire(run), 5)
        await asyncio.sleep(max(0.0, locked_at + LOCK_AT_LEAST_S - loop.time()))
        assert not write.done(), "the lock did not hold the write back"
        assert not prompt.done() or (await prompt).stop_reason == "cancelled"
        assert max(pauses) < MAX_PAUSE_S, f"the event loop paused {max(pauses):.2f} s"
        assert len(chunks_while_locked) >= 5, "the stream stopped while locked"
    finally:
        client.on_update = None
        if lock.in_transaction:
            lock.execute("ROLLBACK")
        lock.close()
    result = await asyncio.wait_for(prompt, 10)
    assert result.stop_reason == "cancelled"
    await asyncio.wait_for(write, 10)
    beat.cancel()
    check_wire(run.wire)
    listed = await run.conn.list_sessions()
    assert [s.session_id for s in listed.sessions] == [sid]
    assert not (acp.root / "out.txt").exists()


async def _cancelled_on_the_wire(run: Any) -> None:
    """Until every call the client saw has ended ``failed``, cancelled."""
    while True:
        calls = calls_by_id(run.notifications())
        if calls and all(c.get("rawOutput", {}).get("cancelled") for c in calls.values()):
            return
        await asyncio.sleep(0.01)

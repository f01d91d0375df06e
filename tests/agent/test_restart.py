"""A session across restarts: what one process promised, the next one keeps.

Each ``acp.again()`` or ``agent(...)`` block below is a fresh ``ToolwireAgent`` with its
own ``StoreWorker`` on the same ``sessions.db`` (the test's XDG data directory): a second
process in all but the pid. Tool call ids stay unique in the session for its whole life,
whoever issued them (the model repeats its ids every time, as a provider numbering
``call_0`` in each response does); a model switch chosen in one process is applied, once,
by whichever process runs the next prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import MODEL, AgentUnderTest, agent_under_test, backend_table
from tests.agent.support import (
    answer,
    check_wire,
    text_of,
)
from toolwire.agent.store.database import SessionDatabase
from toolwire.conversation import ConversationRecord
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio

READ = {"file_path": "app.py"}
NOTICE = "Switched the model from fake to two"


def _started_ids(notes: list[dict[str, Any]]) -> list[str]:
    return [
        n["params"]["update"]["toolCallId"]
        for n in notes
        if n["params"]["update"]["sessionUpdate"] == "tool_call"
    ]


def _db(tmp_path: Path) -> SessionDatabase:
    return SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db")


def _same_ids_every_time(acp: AgentUnderTest, *answers: Answer) -> None:
    """``answers`` in a loop: the provider's ids come back on every serving."""
    acp.model.function = lambda request: answers[(len(acp.model.requests) - 1) % len(answers)]


async def test_tool_call_ids_never_repeat_across_restarts_and_loads(acp: AgentUnderTest) -> None:
    # Every serving repeats the same provider ids, one of them shaped like an id the
    # agent makes when it renames one (``call_0-2``).
    _same_ids_every_time(
        acp,
        answer(("tool", "Read", READ, "call_0")),
        answer(("tool", "Read", READ, "call_0")),
        answer(("tool", "Read", READ, "call_0-2"), ("tool", "Read", READ, "x")),
        "Done.",
    )
    root = acp.root
    issued: list[str] = []

    async def one_process(pair: AgentUnderTest, sid: str | None, how: str) -> str:
        run = pair.run
        if sid is None:
            sid = await pair.start()
        else:
            await run.conn.initialize(protocol_version=1)
            if how == "load":
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            else:
                await run.conn.resume_session(cwd=str(root), session_id=sid, mcp_servers=[])
        for again in range(2):  # the second time after a session/load in this process
            if again:
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            before = len(run.notifications())
            result = await pair.prompt(sid, "Read it")
            assert result.stop_reason == "end_turn"
            ids = _started_ids(run.notifications()[before:])
            assert len(ids) == 4
            issued.extend(ids)
        check_wire(run.wire)
        return sid

    sid = await one_process(acp, None, "new")
    for how in ("load", "resume"):
        async with acp.again() as pair:
            await one_process(pair, sid, how)
    assert len(issued) == 24
    assert len(set(issued)) == len(issued), f"a toolCallId was issued twice: {issued}"


async def test_two_windows_on_one_session_never_issue_the_same_id(acp: AgentUnderTest) -> None:
    """Two agents (two editor windows) with the same session open prompt it in turn."""
    _same_ids_every_time(acp, answer(("tool", "Read", READ, "call_0")), "Done.")
    root = acp.root
    issued: list[str] = []

    async def prompt(pair: AgentUnderTest, sid: str) -> None:
        before = len(pair.run.notifications())
        result = await pair.prompt(sid, "Read it")
        assert result.stop_reason == "end_turn"
        issued.extend(_started_ids(pair.run.notifications()[before:]))

    async with acp.again() as two:
        sid = await acp.start()
        await two.run.conn.initialize(protocol_version=1)
        await two.run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
        for pair in (acp, two, acp, two):
            await pair.run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            await prompt(pair, sid)
        await prompt(two, sid)  # the same live session again, no reload between
        await prompt(acp, sid)
        check_wire(acp.run.wire)
        check_wire(two.run.wire)
    assert len(issued) == 6
    assert len(set(issued)) == len(issued), f"a toolCallId was issued twice: {issued}"


@pytest.mark.parametrize("reopen", ["restart", "load", "resume"])
async def test_a_model_switch_chosen_before_a_restart_is_applied_once(
    tmp_path: Path, reopen: str
) -> None:
    async def ask(pair: AgentUnderTest, sid: str, text: str) -> str:
        before = len(pair.run.notifications())
        result = await pair.prompt(sid, text)
        assert result.stop_reason == "end_turn"
        return text_of(pair.run.notifications()[before:])

    async def reopened(pair: AgentUnderTest, sid: str) -> None:
        conn, root = pair.run.conn, str(pair.root)
        if reopen == "resume":
            opened: Any = await conn.resume_session(cwd=root, session_id=sid, mcp_servers=[])
        else:
            opened = await conn.load_session(cwd=root, session_id=sid, mcp_servers=[])
        model = next(o for o in opened.config_options if o.id == "model")
        assert model.current_value == "two/m2"

    async with agent_under_test(tmp_path, config=backend_table("two", "m2")) as acp:
        acp.per_model({MODEL: ["One here."], "m2": ["Two here.", "Two again.", "Two still."]})
        sid = await acp.start()
        assert "One here." in await ask(acp, sid, "Hello")
        await acp.run.conn.set_config_option(config_id="model", session_id=sid, value="two")
        if reopen != "restart":  # the same process opens the session anew
            await reopened(acp, sid)
            said = await ask(acp, sid, "Who are you?")
            assert said.count(NOTICE) == 1
            assert "Two here." in said
        check_wire(acp.run.wire)
    if reopen != "restart":
        return
    async with acp.again() as pair:
        await pair.run.conn.initialize(protocol_version=1)
        await reopened(pair, sid)
        said = await ask(pair, sid, "Who are you?")
        assert said.count(NOTICE) == 1
        assert said.index(NOTICE) < said.index("Two here.")
        assert NOTICE not in await ask(pair, sid, "Still you?")
        check_wire(pair.run.wire)
    async with acp.again() as pair:
        await pair.run.conn.initialize(protocol_version=1)
        await reopened(pair, sid)
        said = await ask(pair, sid, "And now?")
        assert NOTICE not in said
        assert "Two still." in said  # still on two
        check_wire(pair.run.wire)
    assert [body["model"] for body in acp.model.bodies] == [MODEL, "m2", "m2", "m2"]
    with _db(tmp_path) as db:
        record = db.get(sid)
        assert record is not None
        assert record.backend == "two"
        # the handoff point: the prompt that applied the switch (after one turn on one)
        point = ConversationRecord.from_config(record.config).point
        assert point is not None
        assert (point.kind, point.at) == ("switch", 2)

"""A session across restarts: what one process promised, the next one keeps.

Each ``agent(...)`` block below is a fresh ``ToolwireAgent`` with its own ``StoreWorker``
on the same ``sessions.db`` (the test's XDG data directory): a second process in all but
the pid. Tool call ids stay unique in the session for its whole life, whoever issued them
(a replay cassette repeats its ids every time it is served, as a provider numbering
``call_0`` in each response does); a model switch chosen in one process is applied, once,
by whichever process runs the next prompt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.agent.support import (
    ScriptedClient,
    agent,
    check_wire,
    environment,
    project,
    response,
    start,
    text_of,
    write_config,
)
from toolwire.agent.store.database import SessionDatabase
from toolwire.conversation import ConversationRecord
from toolwire.testing.streams import write_cassette

READ = {"file_path": "app.py"}
NOTICE = "Switched the model from one to two"


def _started_ids(notes: list[dict[str, Any]]) -> list[str]:
    return [
        n["params"]["update"]["toolCallId"]
        for n in notes
        if n["params"]["update"]["sessionUpdate"] == "tool_call"
    ]


def _db(tmp_path: Path) -> SessionDatabase:
    return SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db")


def test_tool_call_ids_never_repeat_across_restarts_and_loads(tmp_path: Path) -> None:
    root = project(tmp_path)
    # Every serving of this cassette repeats the same provider ids, one of them shaped
    # like an id the agent makes when it renames one (``call_0-2``).
    cassette = write_cassette(
        tmp_path / "calls.jsonl",
        [
            response(("tool", "Read", READ, "call_0")),
            response(("tool", "Read", READ, "call_0"), n=1),
            response(("tool", "Read", READ, "call_0-2"), ("tool", "Read", READ, "x"), n=2),
            response(("text", "Done."), n=3),
        ],
    )
    issued: list[str] = []

    async def one_process(sid: str | None, how: str) -> str:
        client = ScriptedClient()
        async with agent(tmp_path, client, "--backend", f"replay:{cassette}") as run:
            if sid is None:
                sid = await start(run.conn, root)
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
                result = await run.conn.prompt(session_id=sid, prompt=[text_block("Read it")])
                assert result.stop_reason == "end_turn"
                ids = _started_ids(run.notifications()[before:])
                assert len(ids) == 4
                issued.extend(ids)
            check_wire(run.wire)
        return sid

    async def scenario() -> None:
        sid = await one_process(None, "new")
        await one_process(sid, "load")
        await one_process(sid, "resume")

    asyncio.run(scenario())
    assert len(issued) == 24
    assert len(set(issued)) == len(issued), f"a toolCallId was issued twice: {issued}"


def test_two_windows_on_one_session_never_issue_the_same_id(tmp_path: Path) -> None:
    """Two agents (two editor windows) with the same session open prompt it in turn."""
    root = project(tmp_path)
    cassette = write_cassette(
        tmp_path / "calls.jsonl",
        [
            response(("tool", "Read", READ, "call_0")),
            response(("text", "Done."), n=1),
            response(("tool", "Read", READ, "call_0"), n=2),
            response(("text", "Done again."), n=3),
        ],
    )
    backend = ("--backend", f"replay:{cassette}")
    issued: list[str] = []

    async def prompt(run: Any, sid: str) -> None:
        before = len(run.notifications())
        result = await run.conn.prompt(session_id=sid, prompt=[text_block("Read it")])
        assert result.stop_reason == "end_turn"
        issued.extend(_started_ids(run.notifications()[before:]))

    async def scenario() -> None:
        async with (
            agent(tmp_path, ScriptedClient(), *backend) as one,
            agent(tmp_path, ScriptedClient(), *backend) as two,
        ):
            sid = await start(one.conn, root)
            await two.conn.initialize(protocol_version=1)
            await two.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
            for run in (one, two, one, two):
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                await prompt(run, sid)
            await prompt(two, sid)  # the same live session again, no reload between
            await prompt(one, sid)
            check_wire(one.wire)
            check_wire(two.wire)

    asyncio.run(scenario())
    assert len(issued) == 6
    assert len(set(issued)) == len(issued), f"a toolCallId was issued twice: {issued}"


def _two_models(tmp_path: Path) -> Path:
    one = write_cassette(
        tmp_path / "one.jsonl",
        [response(("text", "One here.")), response(("text", "One again."), n=1)],
    )
    two = write_cassette(
        tmp_path / "two.jsonl",
        [response(("text", "Two here."), n=2), response(("text", "Two again."), n=3)],
    )
    return write_config(
        tmp_path,
        f'default_backend = "one"\n[backends.one]\nprovider = "replay"\ncassette = "{one}"\n'
        f'[backends.two]\nprovider = "replay"\ncassette = "{two}"\nmodel = "m2"\n',
    )


@pytest.mark.parametrize("reopen", ["restart", "load", "resume"])
def test_a_model_switch_chosen_before_a_restart_is_applied_once(
    tmp_path: Path, reopen: str
) -> None:
    root = project(tmp_path)
    config = _two_models(tmp_path)
    env = environment(tmp_path)

    async def ask(run: Any, sid: str, text: str) -> str:
        before = len(run.notifications())
        result = await run.conn.prompt(session_id=sid, prompt=[text_block(text)])
        assert result.stop_reason == "end_turn"
        return text_of(run.notifications()[before:])

    async def reopened(run: Any, sid: str) -> None:
        if reopen == "resume":
            opened: Any = await run.conn.resume_session(
                cwd=str(root), session_id=sid, mcp_servers=[]
            )
        else:
            opened = await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
        model = next(o for o in opened.config_options if o.id == "model")
        assert model.current_value == "two"

    async def scenario() -> None:
        client = ScriptedClient()
        async with agent(tmp_path, client, "--config", str(config), env=env) as run:
            sid = await start(run.conn, root)
            assert "One here." in await ask(run, sid, "Hello")
            await run.conn.set_config_option(config_id="model", session_id=sid, value="two")
            if reopen != "restart":  # the same process opens the session anew
                await reopened(run, sid)
                said = await ask(run, sid, "Who are you?")
                assert said.count(NOTICE) == 1
                assert "Two here." in said
            check_wire(run.wire)
        if reopen != "restart":
            return
        client = ScriptedClient()
        async with agent(tmp_path, client, "--config", str(config), env=env) as run:
            await run.conn.initialize(protocol_version=1)
            await reopened(run, sid)
            said = await ask(run, sid, "Who are you?")
            assert said.count(NOTICE) == 1
            assert said.index(NOTICE) < said.index("Two here.")
            assert NOTICE not in await ask(run, sid, "Still you?")
            check_wire(run.wire)
        client = ScriptedClient()
        async with agent(tmp_path, client, "--config", str(config), env=env) as run:
            await run.conn.initialize(protocol_version=1)
            await reopened(run, sid)
            said = await ask(run, sid, "And now?")
            assert NOTICE not in said
            assert "Two here." in said  # still on two, which starts its cassette again
            check_wire(run.wire)
        with _db(tmp_path) as db:
            record = db.get(sid)
            assert record is not None
            assert record.backend == "two"
            # the handoff point: the prompt that applied the switch (after one turn on one)
            point = ConversationRecord.from_config(record.config).point
            assert point is not None
            assert (point.kind, point.at) == ("switch", 2)

    asyncio.run(scenario())

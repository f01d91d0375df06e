"""What the model sees does not depend on whether the agent restarted in between.

Two runs of one script against the same deterministic fake model: one agent that never
stops, and one stopped after the last prompt but one and started again on the same
``sessions.db`` (an in-process ``ToolwireAgent`` with its own store worker: a new process
in all but the pid), the session reopened with ``session/load``. The last request each
sends must be the same bytes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    environment,
    fake_backend,
    project,
    response,
    start,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.agent.store.database import SessionDatabase
from toolwire.conversation import RECORD_KEY, ConversationRecord


def answer(request: Received) -> Reply:
    """A model that answers each prompt with its text: the same reply in every run."""
    last = request.json()["messages"][-1]
    content = last["content"]
    text = content if isinstance(content, str) else content[-1].get("text", "")
    return Reply(chunks=[response(("text", f"Answer to {text[-40:]}")).encode()])


def last_request(
    tmp_path: Path,
    root: Path,
    script: list[str],
    *,
    restart: bool,
    between: Callable[[SessionDatabase, str], None] | None = None,
) -> bytes:
    """Run ``script`` in ``root`` (the last prompt after a restart and ``session/load``
    when ``restart``, ``between`` done to the store before it); the body of the last
    request the model got."""
    tmp_path.mkdir()
    with FakeServer(respond=answer) as server:
        config = write_config(
            tmp_path,
            fake_backend(server.url)
            + 'context_window = 30000\n[compaction]\nsummary = "extractive"\n',
        )
        env = environment(tmp_path, TEST_KEY=KEY)
        args = ("--config", str(config))

        async def run(prompts: list[str], sid: str | None) -> str:
            async with agent(tmp_path, ScriptedClient(), *args, env=env) as one:
                if sid is None:
                    sid = await start(one.conn, root)
                else:
                    await one.conn.initialize(protocol_version=1)
                    await one.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                for text in prompts:
                    await one.conn.prompt(session_id=sid, prompt=[text_block(text)])
                return sid

        async def scenario() -> None:
            if restart:
                sid = await run(script[:-1], None)
                if between is not None:
                    with SessionDatabase(tmp_path / "data" / "toolwire" / "sessions.db") as db:
                        between(db, sid)
                await run(script[-1:], sid)
            else:
                await run(script, None)

        asyncio.run(scenario())
        return server.requests[-1].body


def test_the_request_after_clear_compact_and_a_restart_is_the_one_without(
    tmp_path: Path,
) -> None:
    script = ["q1", "q2", "/clear", "q3", "q4", "q5", "/compact", "q6", "q7"]
    root = project(tmp_path)  # one project: the system prompt names it
    kept = last_request(tmp_path / "kept", root, script, restart=False)
    restarted = last_request(tmp_path / "restarted", root, script, restart=True)
    sent = json.dumps(json.loads(kept)["messages"])
    assert "Answer to q5" in sent  # the compaction's verbatim tail
    assert "Answer to q2" not in sent  # cleared
    assert restarted == kept  # not a tail ending with the answer to q3


def as_stored_before_the_record(db: SessionDatabase, sid: str) -> None:
    """Rewrite the session's points the way the version before the record kept them."""
    stored = db.get(sid)
    assert stored is not None
    config = dict(stored.config)
    record = ConversationRecord.from_config(config)
    point = record.point
    assert point is not None
    config.pop(RECORD_KEY, None)
    compaction = {"at": point.at, "tail_from": point.tail_from, "block": point.block}
    compaction |= {"cuts": [list(c) for c in point.cuts], "ratio": record.ratio}
    db.update(sid, config={**config, "cleared_at": record.cleared, "compaction": compaction})


def test_a_session_stored_by_the_previous_version_loads_with_the_same_request(
    tmp_path: Path,
) -> None:
    script = ["q1", "q2", "/clear", "q3", "q4", "q5", "/compact", "q6", "q7"]
    root = project(tmp_path)
    kept = last_request(tmp_path / "kept", root, script, restart=False)
    old = last_request(
        tmp_path / "old", root, script, restart=True, between=as_stored_before_the_record
    )
    assert old == kept

"""``/rewind`` never undoes the user's own work and never half-applies, in the agent: a turn
whose end was never checkpointed, a git lock left in the store by a killed process, a
failed checkpoint, a file the rewind cannot change (the ACP pair, the model a function)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.pair import AgentUnderTest
from tests.agent.support import text_of
from tests.checkpoints.support import chattr, immutable_allowed
from toolwire.agent.features import checkpointing
from toolwire.agent.store import prompt_index
from toolwire.agent.store.database import SessionDatabase
from toolwire.checkpoints import Checkpoints
from toolwire.checkpoints.git import run
from toolwire.testing.streams import text, tool_call

pytestmark = pytest.mark.anyio


async def _ask(acp: AgentUnderTest, sid: str, line: str) -> str:
    since = len(acp.run.notifications())
    result = await acp.prompt(sid, line)
    assert result.stop_reason == "end_turn"
    return text_of(acp.run.notifications()[since:])


def _writer(acp: AgentUnderTest) -> None:
    """A model that writes ``NAME`` with "by the model" when the prompt is ``write NAME``."""

    def model(request: Any) -> Any:
        said = request.messages[-1].text() if request.messages[-1].role == "user" else ""
        if said.startswith("write "):
            args = {"file_path": said.split()[1], "content": "by the model\n"}
            return [*text("Writing."), *tool_call(f"toolu_{said.split()[1]}", "Write", args)]
        return "done"

    acp.model.function = model


async def _session(acp: AgentUnderTest) -> str:
    _writer(acp)
    acp.client.answers = ["allow"] * 10
    sid = await acp.start()
    await acp.run.conn.set_session_mode(session_id=sid, mode_id="bypass")
    return sid


def _store(acp: AgentUnderTest, sid: str) -> Checkpoints:
    return Checkpoints.open(checkpointing.root(), sid, (str(acp.root),))


def _prompts(acp: AgentUnderTest, sid: str) -> list[int]:
    db = SessionDatabase(acp.root.parent / "data" / "toolwire" / "sessions.db")
    with db:
        return [r.number for r in prompt_index.prompts(db, sid)]


async def test_a_users_edit_after_a_turn_killed_mid_way_is_kept(acp: AgentUnderTest) -> None:
    sid = await _session(acp)
    await _ask(acp, sid, "write app.py")
    store = _store(acp, sid)
    run(store.store, ["update-ref", "-d", "refs/checkpoints/after-1"])  # killed: no after-1
    (acp.root / "notes.md").write_text("typed by the user\n", encoding="utf-8")
    told = await _ask(acp, sid, "/rewind 1 code")
    assert (acp.root / "notes.md").read_text(encoding="utf-8") == "typed by the user\n"
    assert "notes.md" in told
    assert "not checkpointed" in told
    assert "Files conflicts" not in told


async def test_a_stale_lock_in_the_store_does_not_cost_later_checkpoints(
    acp: AgentUnderTest,
) -> None:
    sid = await _session(acp)
    await _ask(acp, sid, "write one.txt")
    index = next((_store(acp, sid).store / "indexes").iterdir())
    Path(f"{index}.lock").write_bytes(b"")  # left by a process-group kill mid-checkpoint
    await _ask(acp, sid, "write two.txt")
    told = await _ask(acp, sid, "/rewind 2 code")
    assert "Files removed: two.txt" in told
    assert not (acp.root / "two.txt").exists()
    assert (acp.root / "one.txt").exists()


async def test_a_failed_checkpoint_is_reported_as_failed_not_pruned(acp: AgentUnderTest) -> None:
    sid = await _session(acp)
    await _ask(acp, sid, "write one.txt")
    index = next((_store(acp, sid).store / "indexes").iterdir())
    index.unlink()
    index.mkdir()  # every git run on it fails now
    await _ask(acp, sid, "write two.txt")
    listing = await _ask(acp, sid, "/rewind")
    assert "write two.txt  (checkpoint failed)" in listing
    told = await _ask(acp, sid, "/rewind 2 code")
    assert "the checkpoint before prompt 2 failed" in told
    assert "pruned" not in told + listing


async def test_a_file_the_rewind_cannot_change_stops_it_whole(acp: AgentUnderTest) -> None:
    if not immutable_allowed(acp.tmp_path):
        pytest.skip("chattr +i is not allowed here (needs CAP_LINUX_IMMUTABLE and ext4/xfs)")
    sid = await _session(acp)
    await _ask(acp, sid, "write new.txt")
    await _ask(acp, sid, "write app.py")
    app = acp.root / "app.py"
    assert chattr("+i", app)
    try:
        told = await _ask(acp, sid, "/rewind 1")
    finally:
        chattr("-i", app)
    assert "Nothing was rewound" in told
    assert "app.py (it is immutable or append-only (chattr))" in told
    assert (acp.root / "new.txt").exists()  # not half-applied
    assert not [p for p in acp.root.rglob("*") if p.name.endswith(".toolwire-restore")]
    assert _prompts(acp, sid) == [1, 2]  # the conversation is not cut either
    told = await _ask(acp, sid, "/rewind 1")
    assert "Files removed: new.txt" in told
    assert _prompts(acp, sid) == []


async def test_a_blocked_rewind_leaves_the_last_undo_as_it_was(acp: AgentUnderTest) -> None:
    if not immutable_allowed(acp.tmp_path):
        pytest.skip("chattr +i is not allowed here (needs CAP_LINUX_IMMUTABLE and ext4/xfs)")
    sid = await _session(acp)
    await _ask(acp, sid, "write a.txt")
    await _ask(acp, sid, "write b.txt")
    assert "Files removed: b.txt" in await _ask(acp, sid, "/rewind 2 code")
    assert chattr("+i", acp.root / "a.txt")
    try:
        assert "Nothing was rewound" in await _ask(acp, sid, "/rewind 1 code")
    finally:
        chattr("-i", acp.root / "a.txt")
    told = await _ask(acp, sid, "/rewind undo")
    assert "Files recreated: b.txt" in told
    assert (acp.root / "b.txt").read_text(encoding="utf-8") == "by the model\n"

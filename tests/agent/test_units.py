"""Pieces of the agent without a process: history collection, ids, permission rules."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.agent.protocol.ids import IdGuard
from toolwire.agent.session.permissions import bounded_diff, preview
from toolwire.agent.session.turn_state import PromptStopReason, TurnState, TurnStateError
from toolwire.agent.turn.collect import ResponseCollector
from toolwire.events import (
    Event,
    MessageEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.history import TextPart, ThinkingPart, ToolCallPart
from toolwire.tools import LocalFileSystem, Tool, ToolContext, ToolLimits, get_tool
from toolwire.updates.wire import diff_content, text_content

pytestmark = pytest.mark.anyio


def test_collector_keeps_the_order_signatures_and_bad_arguments() -> None:
    collector = ResponseCollector()
    events: list[Event] = [
        ThinkingDelta("Let me "),
        ThinkingDelta("think."),
        ThinkingDelta("", signature="sig"),
        ThinkingDelta("", redacted="opaque"),
        TextDelta("="),
        TextDelta("="),
        ToolCallStart("c1", "Read", 0, signature="gsig"),
        ToolCallDelta("c1", '{"file_path": "a.py"}'),
        ToolCallEnd("c1", {"file_path": "a.py"}),
        ToolCallStart("c2", "Edit", 1),
        ToolCallEnd("c2", error="invalid JSON", raw='{"file_pa'),
        TextDelta("after"),
        MessageEnd("tool_use"),
    ]
    for event in events:
        collector.feed(event)
    message = collector.message("claude")
    assert message is not None
    assert message.backend == "claude"
    assert message.parts == (
        ThinkingPart("Let me think.", signature="sig"),
        ThinkingPart("", redacted="opaque"),
        TextPart("=="),  # equal adjacent deltas are text, never a duplicate
        ToolCallPart("c1", "Read", {"file_path": "a.py"}, "gsig"),
        ToolCallPart("c2", "Edit", '{"file_pa'),
        TextPart("after"),
    )
    assert collector.stop_reason == "tool_use"
    assert [c.error for c in collector.ordered_calls()] == [None, "invalid JSON"]


def test_id_guard_renames_only_ids_the_session_already_used() -> None:
    used = {"toolu_1"}
    guard = IdGuard(used)
    start = guard.event(ToolCallStart("toolu_1", "Read", 0))
    assert isinstance(start, ToolCallStart)
    assert start.id == "toolu_1-2"
    delta = guard.event(ToolCallDelta("toolu_1", "{}", ("a",), (1,)))
    assert isinstance(delta, ToolCallDelta)
    assert (delta.id, delta.fields, delta.values) == ("toolu_1-2", ("a",), (1,))
    end = guard.event(ToolCallEnd("toolu_1", {}))
    assert isinstance(end, ToolCallEnd)
    assert end.id == "toolu_1-2"
    fresh = ToolCallStart("toolu_9", "Read", 1)
    assert guard.event(fresh) is fresh
    assert guard.acp_id("toolu_1") == "toolu_1-2"
    assert used == {"toolu_1", "toolu_1-2", "toolu_9"}


async def test_preview_shows_the_diff_an_edit_would_make(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 1\n", encoding="utf-8")
    ctx = ToolContext.create(tmp_path)
    edit, write = get_tool("Edit"), get_tool("Write")
    assert edit is not None
    assert write is not None

    async def run(tool: Tool, args: Mapping[str, Any]) -> dict[str, Any] | None:
        shown = await preview(tool, args, ctx)
        if shown is None:
            return None
        (item,) = shown  # a small file: the diff alone, no note
        return item

    path = str(tmp_path / "a.py")
    one = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    assert await run(edit, one) == {
        "type": "diff",
        "path": path,
        "oldText": "x = 1\ny = 1\n",
        "newText": "x = 2\ny = 1\n",
    }
    ambiguous = {"file_path": "a.py", "old_string": "= 1", "new_string": "= 2"}
    assert await run(edit, ambiguous) is None  # the tool will refuse it: nothing to show
    everywhere = await run(edit, {**ambiguous, "replace_all": True})
    assert everywhere is not None
    assert everywhere["newText"] == "x = 2\ny = 2\n"
    assert await run(write, {"file_path": "new.txt", "content": "hi"}) == {
        "type": "diff",
        "path": str(tmp_path / "new.txt"),
        "newText": "hi",
    }
    assert await run(write, {"file_path": "/etc/passwd", "content": "no"}) is None
    read = get_tool("Read")
    assert read is not None
    assert await run(read, {"file_path": "a.py"}) is None


async def test_a_crlf_file_is_approved_with_the_diff_the_edit_then_makes(tmp_path: Path) -> None:
    """The preview plans with the tool's own rules: a ``\\n`` old_string matches CRLF."""
    path = tmp_path / "win.py"
    path.write_bytes(b"def f():\r\n    return 1\r\n")
    ctx = ToolContext.create(tmp_path)
    edit = get_tool("Edit")
    assert edit is not None
    args = {
        "file_path": "win.py",
        "old_string": "f():\n    return 1",
        "new_string": "g():\n    return 2",
    }
    items = await preview(edit, args, ctx)
    assert items is not None
    (shown,) = items
    assert shown == {
        "type": "diff",
        "path": str(path),
        "oldText": "def f():\r\n    return 1\r\n",
        "newText": "def g():\r\n    return 2\r\n",
    }
    result = await edit.run(args, ctx)
    assert not result.is_error
    assert path.read_bytes().decode("utf-8") == shown["newText"], "approved == applied"


async def _a_long_turn() -> PromptStopReason:
    await asyncio.sleep(10)
    return "end_turn"


async def test_turn_state_moves_through_its_table_and_refuses_the_rest() -> None:
    state = TurnState()
    assert state.phase == "idle"
    with pytest.raises(TurnStateError):
        state.move("cancel")  # nothing runs: a cancel is a bug, not a no-op
    with pytest.raises(TurnStateError):
        state.finish()
    task = asyncio.create_task(_a_long_turn())
    state.start(task)
    assert state.task is task
    assert not state.cancelling
    with pytest.raises(TurnStateError):
        state.start(task)
    state.cancel()
    assert state.cancelling
    assert task.cancelling()
    state.cancel()  # later cancels do nothing
    assert state.move("cancel") == "cancelling"  # the client answered "cancelled" first
    await asyncio.gather(task, return_exceptions=True)
    state.finish()
    assert (state.phase, state.task) == ("idle", None)


async def test_a_prompt_waiting_for_a_cancelled_turn_runs_after_it_unless_cancelled_too() -> None:
    for cancel_again in (False, True):
        state = TurnState()
        task = asyncio.create_task(_a_long_turn())
        state.start(task)
        state.cancel()
        waiter = asyncio.create_task(state.wait_cancelled())
        await asyncio.sleep(0.01)
        assert not waiter.done()  # the cancelled turn has not finished
        if cancel_again:
            state.cancel()  # sent after the waiting prompt: it covers it
        await asyncio.gather(task, return_exceptions=True)
        state.finish()
        assert await waiter is not cancel_again
        assert state.phase == "idle"


async def test_turn_state_stop_cancels_as_the_user_or_as_the_connection() -> None:
    for cancel, phase in ((True, "cancelling"), (False, "running")):
        state = TurnState()
        state.start(asyncio.create_task(_a_long_turn()))
        await state.stop(cancel=cancel)
        assert state.task is not None
        assert state.task.cancelled()
        assert state.phase == phase
    await TurnState().stop(cancel=True)  # idle: nothing to stop


LINES = st.lists(st.sampled_from(["a\n", "b\n", "cc\n", "\n", "d", "e\r\n"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES, LINES, st.booleans(), st.integers(1, 40))
def test_a_bounded_diff_is_honest_about_what_it_leaves_out(
    head: list[str], middle: list[str], tail: list[str], new_file: bool, limit: int
) -> None:
    """Each text within ``limit``; whole when both fit; else a note, and everything left
    out is either unchanged (the same lines at both ends) or said to be cut."""
    old = None if new_file else "".join(head + middle + tail)
    new = "".join(head + middle[::-1] + ["z\n"] + tail)
    items = bounded_diff("/p/f", new, old, limit)
    diff = items[0]
    assert diff["type"] == "diff"
    assert ("oldText" in diff) == (old is not None)
    shown_old, shown_new = diff.get("oldText", ""), diff["newText"]
    assert len(shown_old) <= limit
    assert len(shown_new) <= limit
    if len(new) <= limit and (old is None or len(old) <= limit):
        assert items == [diff_content("/p/f", new, old)]
        return
    (note,) = items[1:]
    text = note["content"]["text"]
    found = re.search(r"from line ([\d,]+) of ([\d,]+)", text)
    assert found is not None
    assert int(found[2].replace(",", "")) == len(new.splitlines())
    skipped = "".join(new.splitlines(keepends=True)[: int(found[1].replace(",", "")) - 1])
    whole_old = old or ""
    assert whole_old.startswith(skipped)  # the lines before the shown part are the same
    rest_old, rest_new = whole_old[len(skipped) :], new[len(skipped) :]
    if text.startswith("Diff cut at"):
        assert rest_old.startswith(shown_old)
        assert rest_new.startswith(shown_new)
        return
    assert text.startswith("Only the changed lines are shown")
    assert rest_old.startswith(shown_old)
    assert rest_new.startswith(shown_new)
    assert rest_old[len(shown_old) :] == rest_new[len(shown_new) :], "the rest is unchanged"


class _CountingFs(LocalFileSystem):
    def __init__(self) -> None:
        self.read: list[Path] = []

    async def read_text(self, path: Path) -> str:
        self.read.append(path)
        return await super().read_text(path)


async def test_the_preview_never_reads_a_file_read_would_refuse(tmp_path: Path) -> None:
    """Over ``max_file_bytes``: a note instead of a diff, and the file is not opened."""
    (tmp_path / "big.bin").write_bytes(b"y" * 2048)
    (tmp_path / "ok.txt").write_text("1\n2\n3\n4\n5\n6\n7\n8\n9\n", encoding="utf-8")
    fs = _CountingFs()
    limits = ToolLimits(max_file_bytes=1024, read_max_chars=17)
    ctx = ToolContext.create(tmp_path, fs=fs, limits=limits)
    write = get_tool("Write")
    assert write is not None
    shown = await preview(write, {"file_path": "big.bin", "content": "x"}, ctx)
    assert shown == [
        text_content(
            "No preview: big.bin is 2,048 bytes, more than the 1,024 bytes "
            "toolwire reads from a file."
        )
    ]
    assert fs.read == []
    edit = get_tool("Edit")
    assert edit is not None
    args = {"file_path": "ok.txt", "old_string": "5\n", "new_string": "five\n"}
    diff, note = await preview(edit, args, ctx) or []
    assert (diff["oldText"], diff["newText"]) == (
        "2\n3\n4\n5\n6\n7\n8\n",
        "2\n3\n4\nfive\n6\n7\n8\n",
    )
    assert note["content"]["text"].startswith("Only the changed lines are shown, from line 2 of 9")


class _NoReadFs(LocalFileSystem):
    def __init__(self) -> None:
        self.read: list[Path] = []

    async def read_text(self, path: Path) -> str:
        self.read.append(path)  # a real read of a FIFO would block its thread for good
        return ""


async def test_the_preview_never_opens_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    fs = _NoReadFs()
    ctx = ToolContext.create(tmp_path, fs=fs)
    write = get_tool("Write")
    assert write is not None
    for name in ("pipe", "dir"):
        assert await preview(write, {"file_path": name, "content": "x"}, ctx) is None
    assert fs.read == []

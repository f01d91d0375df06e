"""Pieces of the agent without a process: history collection, ids, permission rules."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.collect import ResponseCollector
from toolwire.agent.permissions import decide, preview
from toolwire.agent.turn import IdGuard
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
from toolwire.tools import Tool, ToolContext, get_tool


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


@pytest.mark.parametrize(
    ("mode", "tool", "always", "expected"),
    [
        ("ask", "Read", set(), "allow"),
        ("ask", "TodoWrite", set(), "allow"),
        ("ask", "Edit", set(), "ask"),
        ("ask", "Bash", set(), "ask"),
        ("ask", "Edit", {"Edit"}, "allow"),
        ("accept-edits", "Write", set(), "allow"),
        ("accept-edits", "Bash", set(), "ask"),
        ("accept-edits", "Bash", {"Bash"}, "allow"),
        ("read-only", "Grep", set(), "allow"),
        ("read-only", "Edit", {"Edit"}, "deny"),
        ("read-only", "Bash", set(), "deny"),
    ],
)
def test_mode_decisions(mode: str, tool: str, always: set[str], expected: str) -> None:
    found = get_tool(tool)
    assert found is not None
    assert decide(mode, found, always) == expected


def test_preview_shows_the_diff_an_edit_would_make(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 1\n", encoding="utf-8")
    ctx = ToolContext.create(tmp_path)
    edit, write = get_tool("Edit"), get_tool("Write")
    assert edit is not None
    assert write is not None

    def run(tool: Tool, args: Mapping[str, Any]) -> dict[str, Any] | None:
        return asyncio.run(preview(tool, args, ctx))

    path = str(tmp_path / "a.py")
    one = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    assert run(edit, one) == {
        "type": "diff",
        "path": path,
        "oldText": "x = 1\ny = 1\n",
        "newText": "x = 2\ny = 1\n",
    }
    ambiguous = {"file_path": "a.py", "old_string": "= 1", "new_string": "= 2"}
    assert run(edit, ambiguous) is None  # the tool will refuse it: nothing to show
    everywhere = run(edit, {**ambiguous, "replace_all": True})
    assert everywhere is not None
    assert everywhere["newText"] == "x = 2\ny = 2\n"
    assert run(write, {"file_path": "new.txt", "content": "hi"}) == {
        "type": "diff",
        "path": str(tmp_path / "new.txt"),
        "newText": "hi",
    }
    assert run(write, {"file_path": "/etc/passwd", "content": "no"}) is None
    read = get_tool("Read")
    assert read is not None
    assert run(read, {"file_path": "a.py"}) is None

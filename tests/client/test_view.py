"""The terminal client's session view: ACP v1 replace semantics and the byte arithmetic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import toolwire.client
from toolwire.cli import app
from toolwire.client.view import SessionView, TextAppended, ToolCallChanged, line_size
from toolwire.samples import DEMO_CASSETTE

SID = "sess_1"


def _line(update: dict[str, Any], sid: str = SID) -> bytes:
    params = {"sessionId": sid, "update": update}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def _apply(view: SessionView, *updates: dict[str, Any]) -> list[Any]:
    return [view.apply(SID, u) for u in updates]


def _diff(old: str, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": "/p/a.py", "oldText": old, "newText": new}


START = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "kind": "edit"}


def test_exported_members() -> None:
    assert toolwire.client.__all__ == sorted(toolwire.client.__all__)
    assert "TerminalClient" in toolwire.client.__all__


def test_tool_call_defaults_to_pending_and_updates_replace_fields() -> None:
    view = SessionView()
    first = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    changes = _apply(
        view,
        START,
        {**first, "title": "Edit a.py", "locations": [{"path": "/p/a.py"}]},
        {**first, "content": [_diff("a", "b")], "status": "in_progress"},
        {**first, "content": [_diff("a", "c")], "locations": [{"path": "/p/b.py"}]},
        {**first, "status": "completed"},
    )
    call = view.tool_calls["t1"]
    # content and locations are whole lists: the last one wins, nothing is appended
    assert call.content("diff") == [_diff("a", "c")]
    assert call.fields["locations"] == [{"path": "/p/b.py"}]
    assert (call.title, call.kind, call.status, call.ended) == (
        "Edit a.py",
        "edit",
        "completed",
        True,
    )
    assert [c.created for c in changes] == [True, False, False, False, False]
    assert [c.title_changed for c in changes] == [False, True, False, False, False]
    assert [c.status_changed for c in changes] == [False, False, True, False, True]
    assert view.warnings == []


def test_repeated_tool_call_is_an_upsert_with_a_warning() -> None:
    view = SessionView()
    _apply(view, START, {**START, "title": "Edit b.py", "status": "in_progress"})
    assert view.tool_calls["t1"].title == "Edit b.py"
    assert view.tool_calls["t1"].kind == "edit"
    assert view.warnings == ["tool_call sent again for t1"]


def test_protocol_warnings_for_agent_builders() -> None:
    view = SessionView()
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    _apply(view, {**update, "status": "in_progress"}, {**update, "status": "completed"})
    _apply(view, {**update, "status": "in_progress"})
    assert view.tool_calls["t1"].orphan
    assert view.warnings == [
        "update for unknown tool call t1 (no tool_call first)",
        "update after the end of tool call t1",
        "status of t1 went back from completed to in_progress",
    ]


def _chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def test_chunks_are_grouped_by_message_id() -> None:
    view = SessionView()
    changes = _apply(
        view,
        _chunk("agent_thought_chunk", "hmm ", "m1"),
        _chunk("agent_thought_chunk", "ok", "m1"),
        _chunk("agent_message_chunk", "Hello ", "m2"),
        START,
        _chunk("agent_message_chunk", "world", "m2"),  # same id after a tool call: same message
        _chunk("agent_message_chunk", "Next", "m3"),
    )
    texts = [(m.role, m.message_id, m.text) for m in view.messages]
    assert texts == [
        ("thought", "m1", "hmm ok"),
        ("agent", "m2", "Hello world"),
        ("agent", "m3", "Next"),
    ]
    starts = [c.started for c in changes if isinstance(c, TextAppended)]
    assert starts == [True, False, True, False, True]


def test_chunks_without_ids_are_split_by_kind_and_tool_calls() -> None:
    view = SessionView()
    _apply(
        view,
        _chunk("agent_message_chunk", "a"),
        _chunk("agent_message_chunk", "b"),
        _chunk("agent_thought_chunk", "t"),
        _chunk("agent_message_chunk", "c"),
        START,
        _chunk("agent_message_chunk", "d"),
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "mimeType": "x/y"}},
    )
    assert [m.text for m in view.messages] == ["ab", "t", "c", "d[image x/y]"]


def test_session_values_replace() -> None:
    view = SessionView()
    entry = {"content": "Fix", "priority": "high", "status": "pending"}
    option = {"id": "model", "name": "Model", "type": "select", "currentValue": "a", "options": []}
    _apply(
        view,
        {"sessionUpdate": "plan", "entries": [entry, entry]},
        {"sessionUpdate": "plan", "entries": [{**entry, "status": "completed"}]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "config_option_update", "configOptions": [option]},
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "available_commands_update", "availableCommands": []},
    )
    assert view.plan == [{**entry, "status": "completed"}]
    assert (view.mode, view.config_options, view.usage) == (
        "ask",
        [option],
        {"used": 10, "size": 100},
    )
    assert view.traffic.by_kind["plan"] == 2
    assert view.traffic.notifications == 6


def test_naive_bytes_are_the_full_call_at_each_update() -> None:
    view = SessionView()
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    text = _chunk("agent_message_chunk", "hi", "m1")
    sequence = [
        text,
        START,
        {**update, "title": "Edit a.py"},
        {**update, "rawInput": {"path": "a.py", "new": "x" * 50}},
        {**update, "status": "completed"},
    ]
    _apply(view, *sequence)
    titled = {**START, "sessionUpdate": "tool_call_update", "title": "Edit a.py"}
    with_input = {**titled, "rawInput": {"path": "a.py", "new": "x" * 50}}
    naive = [
        _line(text),
        _line(START),
        _line(titled),
        _line(with_input),
        _line({**with_input, "status": "completed"}),
    ]
    assert view.traffic.bytes_received == sum(len(_line(u)) for u in sequence)
    assert view.traffic.naive_bytes == sum(len(n) for n in naive)
    assert view.traffic.naive_bytes > view.traffic.bytes_received
    assert line_size(SID, text) == len(_line(text))


def _updates_of(tmp_path: Path, response: int) -> list[bytes]:
    """What the update engine sends for one response of the demo cassette (64-byte chunks)."""
    body = json.loads(DEMO_CASSETTE.read_text(encoding="utf-8").splitlines()[response])["body"]
    source = tmp_path / "body.sse"
    source.write_text(body, encoding="utf-8")
    result = CliRunner().invoke(app, ["updates", str(source), "--chunk-size", "64"])
    assert result.exit_code == 0, result.output
    return result.stdout_bytes.splitlines(keepends=True)


def test_bytes_received_match_the_wire_on_a_recorded_edit(tmp_path: Path) -> None:
    lines = _updates_of(tmp_path, 5)  # the Edit of textkit/slugify.py
    view = SessionView()
    changes = []
    for raw in lines:
        params = json.loads(raw)["params"]
        changes.append(view.apply(params["sessionId"], params["update"]))
    assert view.traffic.bytes_received == sum(len(raw) for raw in lines)
    assert view.traffic.notifications == len(lines)
    (call,) = view.tool_calls.values()
    assert call.title == "Edit textkit/slugify.py"
    assert (
        call.fields["rawInput"]["new_string"] == "    words = _WORD.findall(ascii_text.lower())\n"
    )
    tool_changes = [c for c in changes if isinstance(c, ToolCallChanged)]
    assert tool_changes[0].created
    assert tool_changes[1].title_changed  # "Edit file", then the path once it streamed in
    # The engine sends each field once: a naive stream repeats the whole call each time.
    assert view.traffic.naive_bytes > view.traffic.bytes_received
    assert view.warnings == []

"""Rendering the view: exact plain output, and the live renderer's scrollback order."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from toolwire.client.format import summary_lines
from toolwire.client.fs import FsStats
from toolwire.client.live import LiveRenderer
from toolwire.client.render import PlainRenderer
from toolwire.client.view import SessionView

SID = "s"
CWD = Path("/p")
OLD = "def f():\n    return 1\n\n\nprint(f())\n"
NEW = "def f():\n    return 2\n\n\nprint(f())\n"


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=60, highlight=False, emoji=False, soft_wrap=True), out


def _text(kind: str, text: str, mid: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, "messageId": mid}


def _upd(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def _start(call_id: str, title: str, kind: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": kind}


DIFF = {"type": "diff", "path": "/p/f.py", "oldText": OLD, "newText": NEW}
OUTPUT = {"type": "content", "content": {"type": "text", "text": "E\nFAILED (failures=1)\n"}}
PLAN = [
    {"content": "Fix f", "priority": "high", "status": "completed"},
    {"content": "Run the tests", "priority": "medium", "status": "in_progress"},
    {"content": "Report", "priority": "low", "status": "pending"},
]

SESSION = [
    _text("agent_thought_chunk", "The test ", "m1"),
    _text("agent_thought_chunk", "fails.", "m1"),
    _text("agent_message_chunk", "Fixing ", "m2"),
    _text("agent_message_chunk", "it.", "m2"),
    _start("e1", "Edit file", "edit"),
    _upd("e1", title="Edit f.py", locations=[{"path": "/p/f.py"}]),
    _upd("e1", rawInput={"file_path": "f.py", "old_string": "1", "new_string": "2"}),
    _upd("e1", status="in_progress"),
    _upd("e1", status="completed", content=[DIFF]),
    {"sessionUpdate": "plan", "entries": PLAN},
    _start("b1", "Run command", "execute"),
    _upd("b1", title="Run python -m unittest"),
    _upd("b1", status="in_progress"),
    _upd("b1", status="failed", content=[OUTPUT]),
    {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
    _text("agent_message_chunk", "Still failing.", "m3"),
]

PLAIN = """\
thinking: The test fails.
Fixing it.
▸ Edit file
  ↳ Edit f.py
  ⋯ running Edit f.py
✓ Edit f.py
    --- a/f.py
    +++ b/f.py
    @@ -1,4 +1,4 @@
     def f():
    -    return 1
    +    return 2


Plan:
  [x] Fix f
  [>] Run the tests
  [ ] Report
▸ Run command
  ↳ Run python -m unittest
  ⋯ running Run python -m unittest
✗ Run python -m unittest (failed)
    E
    FAILED (failures=1)
mode: ask
Still failing.
"""


def test_plain_output_is_exact() -> None:
    console, out = _console()
    view = SessionView()
    renderer = PlainRenderer(console, view, CWD)
    renderer.begin_turn()
    for update in SESSION:
        renderer.show(view.apply(SID, update))
    renderer.end_turn()
    assert out.getvalue() == PLAIN


def test_plain_new_file_diff_and_agent_markup_stays_text() -> None:
    console, out = _console()
    view = SessionView()
    renderer = PlainRenderer(console, view, CWD)
    new_file = {"type": "diff", "path": "/elsewhere/n.txt", "newText": "[bold]x[/bold]\n"}
    for update in [_start("w1", "Write [red]n.txt", "edit"), _upd("w1", status="completed")]:
        renderer.show(view.apply(SID, update))
    renderer.show(view.apply(SID, _upd("w1", content=[new_file])))  # after the end: no reprint
    assert out.getvalue() == "▸ Write [red]n.txt\n✓ Write [red]n.txt\n"
    assert view.warnings == ["update after the end of tool call w1"]


def test_summary_lines() -> None:
    console, out = _console()
    view = SessionView()
    for update in SESSION:
        view.apply(SID, update)
    view.apply(SID, _start("x1", "Read", "read"))
    for line in summary_lines(view, "end_turn", FsStats(reads=1, writes=2, refused=0)):
        console.print(line)
    traffic = view.traffic
    saved = 1 - traffic.bytes_received / traffic.naive_bytes
    assert out.getvalue() == (
        "Summary\n"
        "  tool calls     3 (1 completed, 1 failed, 1 not ended)\n"
        f"  notifications  {len(SESSION) + 1}\n"
        f"  bytes          {traffic.bytes_received:,} received; a naive stream would need "
        f"{traffic.naive_bytes:,} ({saved:.0%} saved)\n"
        "  file system    1 read, 2 writes, 0 refused\n"
        "  stop reason    end_turn\n"
    )
    usage = {"used": 1200, "size": 200000, "cost": {"amount": 0.5, "currency": "USD"}}
    view.apply(SID, {"sessionUpdate": "usage_update", **usage})
    lines = [str(line) for line in summary_lines(view, None, FsStats())]
    assert lines[-2:] == [
        "  context        1,200 of 200,000 tokens, cost 0.5 USD",
        "  stop reason    none (the turn did not finish)",
    ]


def test_live_renderer_keeps_the_session_order() -> None:
    # Not a terminal: the redrawn region is not shown, only what scrolls above it.
    console, out = _console()
    view = SessionView()
    live = LiveRenderer(console, view, CWD)
    live.begin_turn()
    steps = [
        _text("agent_message_chunk", "Two reads.", "m1"),
        _start("a", "Read a.py", "read"),
        _start("b", "Read b.py", "read"),
        _upd("b", status="completed"),
    ]
    for update in steps:
        live.show(view.apply(SID, update))
    assert out.getvalue() == "Two reads.\n"  # b ended, but a (before it) has not
    live.show(view.apply(SID, _upd("a", status="in_progress")))
    live.show(view.apply(SID, _upd("a", status="completed")))
    assert out.getvalue() == "Two reads.\n✓ Read a.py\n✓ Read b.py\n"
    for update in [_start("c", "Edit c.py", "edit"), {"sessionUpdate": "plan", "entries": PLAN}]:
        live.show(view.apply(SID, update))
    live.end_turn()
    assert out.getvalue().endswith(
        "✓ Read b.py\n· Edit c.py\nPlan:\n  [x] Fix f\n  [>] Run the tests\n  [ ] Report\n"
    )


def test_live_region_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, width=60, force_terminal=True, color_system=None)
    view = SessionView()
    live = LiveRenderer(console, view, CWD)
    live.begin_turn()
    for update in SESSION[:8]:
        live.show(view.apply(SID, update))
    region = Console(file=io.StringIO(), width=60, color_system=None)
    region.print(live._region())
    shown = region.file.getvalue()  # type: ignore[attr-defined]
    assert "Edit f.py" in shown  # the running call, with its spinner
    assert "notifications" in shown
    with live.paused():
        pass
    live.end_turn()
    assert "⋯ Edit f.py" in out.getvalue()  # still running when the turn ended

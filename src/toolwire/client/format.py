"""Pieces of terminal output shared by the plain and the live renderer (rich ``Text``).

Everything here is pure: a tool call, a plan or the traffic counters in, styled text out.
Agent-supplied strings are never parsed as rich markup (an agent's ``[bold]`` stays text).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.text import Text

from toolwire.client.fs import FsStats
from toolwire.client.view import JsonObject, SessionView, ToolCallView, block_text

MARKS = {
    "pending": ("·", "dim"),
    "in_progress": ("⋯", "yellow"),
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
}
PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
OUTPUT_LINES = 8
"""Lines of a command's output (or a failure's message) shown when the call ends."""
INDENT = "    "


def shown_path(path: str, cwd: Path | None) -> str:
    """``path`` relative to the session directory when inside it."""
    if cwd is None:
        return path
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return path


def tool_line(call: ToolCallView, *, mark: bool = True) -> Text:
    """``✓ Edit textkit/slugify.py``: status mark and title."""
    symbol, style = MARKS.get(call.status, ("?", "magenta"))
    line = Text()
    if mark:
        line.append(f"{symbol} ", style=style)
    line.append(call.title, style="bold")
    if call.status == "failed":
        line.append(" (failed)", style="red")
    return line


def args_preview(call: ToolCallView, width: int = 60) -> str:
    """The arguments received so far, one line, cut to ``width`` characters."""
    raw = call.fields.get("rawInput")
    if raw in (None, {}, ""):
        return ""
    text = json.dumps(raw, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= width else text[: width - 1] + "…"


def diff_lines(diff: JsonObject, cwd: Path | None) -> list[Text]:
    """A unified diff of one ``diff`` content item (no ``oldText``: a new file)."""
    name = shown_path(str(diff.get("path", "")), cwd)
    old = diff.get("oldText")
    new = str(diff.get("newText") or "")
    before = str(old).splitlines(keepends=True) if old is not None else []
    lines = difflib.unified_diff(
        before,
        new.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{name}",
        tofile=f"b/{name}",
        n=2,
    )
    return [_diff_line(line.rstrip("\n")) for line in lines]


def _diff_line(line: str) -> Text:
    shown = (INDENT + line).rstrip()  # no trailing blanks from empty context lines
    if line.startswith(("+++", "---")):
        return Text(shown, style="bold")
    style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
    return Text(shown, style=style)


def call_details(call: ToolCallView, cwd: Path | None) -> list[Text]:
    """What to show under an ended call: its diffs, and output for commands and failures."""
    lines: list[Text] = []
    for diff in call.content("diff"):
        lines.extend(diff_lines(diff, cwd))
    if call.kind == "execute" or call.status == "failed":
        lines.extend(_tail(call))
    return lines


def _tail(call: ToolCallView) -> list[Text]:
    texts = [block_text(item.get("content")) for item in call.content("content")]
    output = "\n".join(t for t in texts if t).rstrip("\n").splitlines()
    terminals = call.content("terminal")
    if not output and terminals:
        return [Text(f"{INDENT}[terminal {terminals[0].get('terminalId')}]", style="dim")]
    shown = output[-OUTPUT_LINES:]
    lines = [Text((INDENT + line).rstrip(), style="dim") for line in shown]
    if len(output) > len(shown):
        lines.insert(0, Text(f"{INDENT}… {len(output) - len(shown)} lines above", style="dim"))
    return lines


def plan_lines(entries: Iterable[JsonObject]) -> list[Text]:
    """The plan as a checklist: ``[x] done``, ``[>] doing``, ``[ ] to do``."""
    lines = [Text("Plan:", style="bold")]
    for entry in entries:
        status = str(entry.get("status", "pending"))
        style = {"completed": "green", "in_progress": "yellow"}.get(status, "")
        lines.append(Text(f"  {PLAN_MARKS.get(status, '[?]')} {entry.get('content', '')}", style))
    return lines


def config_line(options: Iterable[JsonObject]) -> Text:
    """``config: Model = demo; Mode = ask`` (each option's name and current value)."""
    parts = [f"{o.get('name') or o.get('id')} = {_value(o)}" for o in options]
    return Text("config: " + "; ".join(parts), style="dim")


def _value(option: JsonObject) -> Any:
    value = option.get("currentValue")
    for choice in option.get("options") or []:
        if isinstance(choice, dict) and choice.get("value") == value and choice.get("name"):
            return choice["name"]
    return value


def summary_lines(view: SessionView, stop_reason: str | None, fs: FsStats) -> list[Text]:
    """The end-of-run summary: tool calls, notifications, bytes vs naive, stop reason."""
    counts = view.counts()
    traffic = view.traffic
    done, failed = counts["completed"], counts["failed"]
    open_calls = len(view.tool_calls) - done - failed
    calls = f"{len(view.tool_calls)} ({done} completed, {failed} failed"
    calls += f", {open_calls} not ended)" if open_calls else ")"
    saved = 1 - traffic.bytes_received / traffic.naive_bytes if traffic.naive_bytes else 0.0
    rows = [
        ("tool calls", calls),
        ("notifications", f"{traffic.notifications}"),
        (
            "bytes",
            f"{traffic.bytes_received:,} received; a naive stream would need "
            f"{traffic.naive_bytes:,} ({saved:.0%} saved)",
        ),
        ("file system", f"{_n(fs.reads, 'read')}, {_n(fs.writes, 'write')}, {fs.refused} refused"),
        ("stop reason", stop_reason or "none (the turn did not finish)"),
    ]
    if view.usage is not None:
        rows.insert(-1, ("context", _usage(view.usage)))
    lines = [Text("Summary", style="bold")]
    lines += [Text(f"  {name:<15}{value}") for name, value in rows]
    lines += [Text(f"  warning: {w}", style="yellow") for w in view.warnings]
    return lines


def _usage(usage: JsonObject) -> str:
    text = f"{usage.get('used', 0):,} of {usage.get('size', 0):,} tokens"
    cost = usage.get("cost")
    if isinstance(cost, dict) and "amount" in cost:
        text += f", cost {cost['amount']} {cost.get('currency', '')}".rstrip()
    return text


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


__all__ = [
    "args_preview",
    "call_details",
    "config_line",
    "diff_lines",
    "plan_lines",
    "shown_path",
    "summary_lines",
    "tool_line",
]

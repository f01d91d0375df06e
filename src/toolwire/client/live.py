"""The live renderer: a redrawn region on a terminal, finished items scroll above it.

The region shows what is still moving: tool calls not yet ended (a spinner while
``in_progress``, the arguments filling in while ``pending``), the text being streamed, the
plan and running counters. An item is printed for good, above the region, once it is
finished and everything before it is too, so the scrollback keeps the session's order
even when calls run in parallel. Text is finished when anything comes after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from toolwire.client.format import args_preview, call_details, plan_lines, tool_line
from toolwire.client.render import PREFIX, session_line
from toolwire.client.view import (
    Change,
    Message,
    SessionView,
    TextAppended,
    ToolCallChanged,
    ToolCallView,
)

TEXT_LINES = 6
"""Lines of streaming text kept in the region (all of it is printed when it ends)."""


@dataclass(slots=True)
class _TextEntry:
    """A stretch of one message, from ``start`` (a message resumed after a tool call)."""

    message: Message
    start: int

    def text(self) -> str:
        return self.message.text[self.start :]


class LiveRenderer:
    """Redraws the open part of the turn (see the module docstring)."""

    def __init__(self, console: Console, view: SessionView, cwd: Path | None = None) -> None:
        self.console = console
        self.view = view
        self.cwd = cwd
        self._pending: list[ToolCallView | _TextEntry] = []
        self._live = Live(
            console=console,
            get_renderable=self._region,
            refresh_per_second=12,
            transient=True,
        )

    def show(self, change: Change) -> None:
        """Track the change; print what it finished."""
        if isinstance(change, TextAppended):
            last = self._pending[-1] if self._pending else None
            if not (isinstance(last, _TextEntry) and last.message is change.message):
                start = len(change.message.text) - len(change.text)
                self._pending.append(_TextEntry(change.message, start))
        elif isinstance(change, ToolCallChanged):
            if change.created:
                self._pending.append(change.call)
        else:
            line = session_line(self.view, change)
            if line is not None:
                self.console.print(line)
        self._flush(force=False)

    def note(self, text: Text) -> None:
        """Print above the region."""
        self.console.print(text)

    def begin_turn(self) -> None:
        """Start redrawing."""
        self._live.start()

    def end_turn(self) -> None:
        """Print everything still open, the final plan, and stop redrawing."""
        self._flush(force=True)
        if self.view.plan:
            self.console.print(Group(*plan_lines(self.view.plan)))
        self._live.stop()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing while the user answers a question."""
        self._live.stop()
        try:
            yield
        finally:
            self._live.start()

    def _flush(self, *, force: bool) -> None:
        while self._pending:
            head = self._pending[0]
            if isinstance(head, _TextEntry):
                if not force and len(self._pending) == 1:
                    return
                self._print_text(head)
            else:
                if not (force or head.ended):
                    return
                # One print per item: each print redraws the region below it.
                self.console.print(Group(tool_line(head), *call_details(head, self.cwd)))
            self._pending.pop(0)

    def _print_text(self, entry: _TextEntry) -> None:
        prefix, style = PREFIX[entry.message.role]
        text = entry.text().rstrip("\n")
        if text:
            self.console.print(Text(prefix + text, style=style))

    def _region(self) -> RenderableType:
        # Called from rich's refresh thread: iterate over copies, never the live lists.
        rows: list[RenderableType] = [self._entry(e) for e in list(self._pending)]
        plan = self.view.plan
        if plan:
            rows.extend(plan_lines(plan))
        traffic = self.view.traffic
        counters = f"{traffic.notifications} notifications · {traffic.bytes_received:,} bytes"
        rows.append(Text(counters, style="dim"))
        return Group(*rows)

    def _entry(self, entry: ToolCallView | _TextEntry) -> RenderableType:
        if isinstance(entry, _TextEntry):
            prefix, style = PREFIX[entry.message.role]
            lines = (prefix + entry.text()).splitlines()[-TEXT_LINES:]
            return Text("\n".join(lines), style=style)
        if entry.status == "in_progress":
            return Spinner("dots", text=tool_line(entry, mark=False), style="yellow")
        line = tool_line(entry)
        preview = args_preview(entry)
        if preview:
            line.append(f"  {preview}", style="dim")
        return line


__all__ = ["TEXT_LINES", "LiveRenderer"]

"""Renderers: how a session's changes reach the terminal.

``PlainRenderer`` writes line by line and never redraws, so pipes, logs and tests get
stable text (assistant text streams inline; everything else is whole lines).
``LiveRenderer`` (``toolwire.client.live``) redraws a ``rich.live.Live`` region on a
terminal. Both print through the one ``rich.console.Console`` they are given (STYLE 14).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.text import Text

from toolwire.client.format import call_details, config_line, plan_lines, tool_line
from toolwire.client.view import (
    Change,
    Message,
    SessionChanged,
    SessionView,
    TextAppended,
    ToolCallChanged,
)

PREFIX = {"thought": ("thinking: ", "dim italic"), "user": ("> ", "bold"), "agent": ("", "")}


class Renderer(Protocol):
    """What the terminal client needs from a renderer."""

    console: Console

    def show(self, change: Change) -> None:
        """Display one change of the session view."""

    def note(self, text: Text) -> None:
        """Print one line of client information (a permission given, an error)."""

    def begin_turn(self) -> None:
        """A prompt turn starts."""

    def end_turn(self) -> None:
        """The turn ended: print whatever is still open."""

    def paused(self) -> AbstractContextManager[None]:
        """Stop redrawing while the user types (a permission question)."""


class PlainRenderer:
    """Line-by-line output: the tool name as it arrives, title refinements, end marks."""

    def __init__(self, console: Console, view: SessionView, cwd: Path | None = None) -> None:
        self.console = console
        self.view = view
        self.cwd = cwd
        self._open: Message | None = None  # the message whose line is still open
        self._at_line_start = True

    def show(self, change: Change) -> None:
        """Display one change (see the class docstring)."""
        if isinstance(change, TextAppended):
            self._text(change)
        elif isinstance(change, ToolCallChanged):
            self._call(change)
        else:
            self._session(change)

    def note(self, text: Text) -> None:
        """Print a line of client information."""
        self._break()
        self.console.print(text)

    def begin_turn(self) -> None:
        """Nothing to set up for plain output."""

    def end_turn(self) -> None:
        """Close a text line left open."""
        self._break()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Close the open line so a question starts on its own."""
        self._break()
        yield

    def _break(self) -> None:
        if self._open is not None and not self._at_line_start:
            self.console.print()
        self._open = None
        self._at_line_start = True

    def _text(self, change: TextAppended) -> None:
        prefix, style = PREFIX[change.message.role]
        if change.message is not self._open:
            self._break()
            self._open = change.message
            self.console.print(Text(prefix, style=style), end="")
        if change.text:
            self.console.print(Text(change.text, style=style), end="")
            self._at_line_start = change.text.endswith("\n")

    def _call(self, change: ToolCallChanged) -> None:
        self._break()
        call = change.call
        if change.created:
            self.console.print(Text("▸ ") + tool_line(call, mark=False))
        elif change.title_changed and not call.ended:
            self.console.print(Text(f"  ↳ {call.title}", style="dim"))
        if call.status == "in_progress" and (change.created or change.status_changed):
            self.console.print(Text(f"  ⋯ running {call.title}", style="yellow"))
        if call.ended and (change.created or change.status_changed):
            self.console.print(tool_line(call))
            for line in call_details(call, self.cwd):
                self.console.print(line)

    def _session(self, change: SessionChanged) -> None:
        if change.same:
            return
        line = session_line(self.view, change)
        if line is not None:
            self._break()
            self.console.print(line)
        elif change.kind == "plan":
            self._break()
            for entry in plan_lines(self.view.plan):
                self.console.print(entry)


def session_line(view: SessionView, change: SessionChanged) -> Text | None:
    """The one line a mode or config change prints (None for others and repeats)."""
    if change.same:
        return None
    if change.kind == "current_mode_update":
        return Text(f"mode: {view.mode}", style="dim")
    if change.kind == "config_option_update":
        return config_line(view.config_options)
    return None


__all__ = ["PREFIX", "PlainRenderer", "Renderer", "session_line"]

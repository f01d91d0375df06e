"""Questions to the user: permission requests, and the lines they type.

Standard input is read by one daemon thread feeding an asyncio queue: a read blocked on
the keyboard then never delays cancellation nor the program's exit (``asyncio.to_thread``
would, its worker threads are joined at exit).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
)
from rich.text import Text

from toolwire.client.render import Renderer
from toolwire.client.view import ToolCallView

ALLOW_ORDER = ("allow_once", "allow_always")
"""Options an automatic answer takes, best first: the narrowest permission that works."""
REJECT_ORDER = ("reject_once", "reject_always")
"""Options taken when nobody can answer, best first: the narrowest refusal."""
HOW_TO_ALLOW = (
    "  nobody can answer permission requests here (standard input is not a terminal), so "
    "they are rejected; run `toolwire client --yes` to allow each one once"
)


class LineReader:
    """Lines of a text stream, ``None`` at its end (see the module docstring)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        self._queue: asyncio.Queue[str | None] | None = None
        self._eof = False

    async def readline(self) -> str | None:
        """The next line without its newline; ``None`` once the stream has ended."""
        if self._eof:
            return None
        if self._queue is None:
            self._queue = asyncio.Queue()
            loop = asyncio.get_running_loop()
            threading.Thread(target=self._pump, args=(loop, self._queue), daemon=True).start()
        line = await self._queue.get()
        if line is None:
            self._eof = True
            return None
        return line.rstrip("\r\n")

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        while True:
            try:
                line: str | None = self._stream.readline() or None
            except (OSError, ValueError):
                line = None
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:
                return  # the loop is closed: nobody is waiting for lines any more
            if line is None:
                return


class Permissions:
    """Answers ``session/request_permission``: by asking the user; allowed once only with
    ``auto`` (``--yes``, the demo); rejected when nobody can answer (no ``reader``)."""

    def __init__(self, renderer: Renderer, *, auto: bool, reader: LineReader | None) -> None:
        self.renderer = renderer
        self.auto = auto
        self.reader = reader
        self.asked = 0
        self._told = False  # how to allow: said once, at the first rejection
        self._cancelled = asyncio.Event()
        self._asking = asyncio.Lock()  # one question on screen at a time

    def reset(self) -> None:
        """A new turn: questions may be asked again."""
        self._cancelled = asyncio.Event()

    def cancel_pending(self) -> None:
        """Answer every open question ``cancelled`` (ACP: required on ``session/cancel``)."""
        self._cancelled.set()

    async def decide(
        self, call: ToolCallView, options: Sequence[PermissionOption]
    ) -> RequestPermissionResponse:
        """The outcome for one request about ``call``."""
        self.asked += 1
        if self._cancelled.is_set():
            return _cancelled()
        if self.auto:
            return self._automatic(call, options)
        if self.reader is None:
            return self._unanswered(call, options)
        choice = await self._ask(call, options)
        if choice is None:
            self.renderer.note(Text(f"  permission cancelled: {call.title}", style="red"))
            return _cancelled()
        self.renderer.note(Text(f"  {choice.name}: {call.title}", style="green"))
        return _selected(choice)

    def _automatic(
        self, call: ToolCallView, options: Sequence[PermissionOption]
    ) -> RequestPermissionResponse:
        for kind in ALLOW_ORDER:
            for option in options:
                if option.kind == kind:
                    label = "once" if kind == "allow_once" else "always"
                    note = f"  allowed {label} (auto): {call.title}"
                    self.renderer.note(Text(note, style="green"))
                    return _selected(option)
        self.renderer.note(Text(f"  no allow option, cancelled: {call.title}", style="red"))
        return _cancelled()

    def _unanswered(
        self, call: ToolCallView, options: Sequence[PermissionOption]
    ) -> RequestPermissionResponse:
        """Nobody to ask and no ``--yes``: the narrowest rejection; how to allow, once."""
        if not self._told:
            self._told = True
            self.renderer.note(Text(HOW_TO_ALLOW, style="yellow"))
        for kind in REJECT_ORDER:
            for option in options:
                if option.kind == kind:
                    self.renderer.note(Text(f"  rejected (nobody to ask): {call.title}", "red"))
                    return _selected(option)
        self.renderer.note(Text(f"  nobody to ask, cancelled: {call.title}", style="red"))
        return _cancelled()

    async def _ask(
        self, call: ToolCallView, options: Sequence[PermissionOption]
    ) -> PermissionOption | None:
        assert self.reader is not None  # without one, requests are rejected unasked
        async with self._asking:
            return await self._question(call, options)

    async def _question(
        self, call: ToolCallView, options: Sequence[PermissionOption]
    ) -> PermissionOption | None:
        with self.renderer.paused():
            console = self.renderer.console
            console.print(Text(f"Permission requested: {call.title}", style="bold yellow"))
            for number, option in enumerate(options, start=1):
                console.print(Text(f"  {number}) {option.name}"))
            while True:
                console.print(Text(f"choose 1-{len(options)}: "), end="")
                line = await self._line()
                if line is None:
                    return None
                picked = _pick(line, options)
                if picked is not None:
                    return picked

    async def _line(self) -> str | None:
        assert self.reader is not None
        read = asyncio.ensure_future(self.reader.readline())
        cancel = asyncio.ensure_future(self._cancelled.wait())
        done, _ = await asyncio.wait({read, cancel}, return_when=asyncio.FIRST_COMPLETED)
        cancel.cancel()
        if read in done:
            return read.result()
        # Cancelling a queue.get() leaves the line queued: the next question gets it.
        read.cancel()
        return None


def _pick(line: str, options: Sequence[PermissionOption]) -> PermissionOption | None:
    answer = line.strip().lower()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    matches = [o for o in options if answer and o.name.lower().startswith(answer)]
    return matches[0] if len(matches) == 1 else None


def _selected(option: PermissionOption) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
    )


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


__all__ = ["ALLOW_ORDER", "HOW_TO_ALLOW", "REJECT_ORDER", "LineReader", "Permissions"]

"""Where a session's ``session/update``s go: the wire, in order, once the session exists.

``Outbox.emit`` writes synchronously, so the order of ``emit`` calls is the order on the
wire whatever task makes them (a tool's output callback, the model stream, the
throttle timer): the update engine decides the order, nothing after it can change it.
``drain`` waits for the client to keep up; the agent drains before it sends a request
(a permission must follow its ``tool_call`` on the wire) and before it answers a prompt
(ACP: updates for a turn come before the ``session/prompt`` response).

An outbox made ``held`` keeps what it is given until ``open()``: ACP says nothing may be
sent for a session before its ``session/new`` response is written (docs/design.md, "ACP rules
that bite").

``Ticker`` runs the engine's clock: the engine is sans-IO and holds coalesced updates
until a deadline; the ticker polls it then, with ``loop.call_at``, no task needed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from toolwire.updates.engine import UpdateEngine
from toolwire.updates.render import Envelope
from toolwire.updates.wire import Notification

log = logging.getLogger("toolwire.agent")


class LineSink(Protocol):
    """What an outbox writes to (``StdioTransport``)."""

    def write_line(self, line: bytes) -> None: ...

    async def drain(self) -> None: ...


class Outbox:
    """One session's notifications, written in ``emit`` order."""

    def __init__(self, sink: LineSink, session_id: str, *, held: bool = False) -> None:
        self._sink = sink
        self.session_id = session_id
        self._envelope = Envelope(session_id)
        self._held: list[bytes] | None = [] if held else None
        self._broken = False

    @property
    def sink(self) -> LineSink:
        """Where the lines go (a subagent's outbox writes to its parent's)."""
        return self._sink

    def emit(self, notes: Iterable[Notification]) -> None:
        """Write engine notifications (already encoded lines)."""
        for note in notes:
            self._write(note.line)

    def update(self, update: Mapping[str, Any]) -> None:
        """Write one ``session/update`` built outside the engine (modes, config, replay)."""
        self._write(self._envelope.notify(update).line)

    def open(self) -> None:
        """The ``session/new`` response is written: send what was held, then go live."""
        held, self._held = self._held, None
        for line in held or ():
            self._write(line)

    async def drain(self) -> None:
        """Wait for the client to read what was written (no-op once the pipe broke)."""
        if self._broken:
            return
        try:
            await self._sink.drain()
        except ConnectionError:
            self._gone()

    def _write(self, line: bytes) -> None:
        if self._held is not None:
            self._held.append(line)
            return
        if self._broken:
            return
        try:
            self._sink.write_line(line)
        except ConnectionError:
            self._gone()

    def _gone(self) -> None:
        # The client went away: the turn still ends cleanly (history saved), unheard.
        if not self._broken:
            log.info("session %s: the client closed the connection", self.session_id)
        self._broken = True


class Ticker:
    """Polls an ``UpdateEngine`` at its deadlines (the engine's clock is ``loop.time``)."""

    def __init__(self, engine: UpdateEngine, outbox: Outbox) -> None:
        self._engine = engine
        self._outbox = outbox
        self._loop = asyncio.get_running_loop()
        self._handle: asyncio.TimerHandle | None = None

    def send(self, notes: Iterable[Notification]) -> None:
        """Emit ``notes`` and make sure whatever the engine holds goes out on time."""
        self._outbox.emit(notes)
        self.arm()

    def arm(self) -> None:
        """Schedule a poll at the engine's next deadline, if it has one."""
        deadline = self._engine.next_deadline()
        if deadline is None:
            return
        if self._handle is not None:
            if self._handle.when() <= deadline:
                return
            self._handle.cancel()
        self._handle = self._loop.call_at(deadline, self._fire, deadline)

    def stop(self) -> None:
        """No more polls (the turn flushed the engine)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self, deadline: float) -> None:
        self._handle = None
        # The loop may run a timer a clock tick early; the engine must see it as due.
        self._outbox.emit(self._engine.poll(max(self._loop.time(), deadline)))
        self.arm()


__all__ = ["LineSink", "Outbox", "Ticker"]

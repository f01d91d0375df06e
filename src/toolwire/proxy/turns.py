"""New requests take turns with the streams already open (docs/proxy.md, "Many streams").

A request's set-up (reading and checking it, planning it, building the upstream
request) is about a millisecond of work that never awaits anything, and the event loop
runs every task that is ready before it reads its sockets again. So a burst of requests
(a hundred agents starting together) is set up in one pass of the loop, and every open
stream's next event waits behind all of it: tens of milliseconds, the proxy's worst
added latency by far. Here each request waits for its turn before its set-up starts,
and turns come one per pass of the loop: between two set-ups the loop reads its sockets
and relays what arrived. A request that finds no one waiting starts at once, so a
lone request waits for nothing; each in a burst waits for the ones before it, as it
did before, now with the open streams served in between.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from starlette.middleware import Middleware


class Turns:
    """At most one turn per pass of the event loop, given in the order asked."""

    def __init__(self) -> None:
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._given = False  # a turn went out in this pass of the loop
        self._loop: asyncio.AbstractEventLoop | None = None

    async def take(self) -> None:
        """Return when it is this caller's turn."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop (tests run several): nothing is pending
            self._loop, self._given = loop, False
            self._waiting.clear()
        if not self._given:
            self._given = True
            loop.call_soon(self._next)
            return
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiting.append(waiter)
        await waiter  # a caller cancelled here is skipped when its turn comes

    def _next(self) -> None:
        """The loop went round: the first caller still waiting gets the turn."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                waiter.get_loop().call_soon(self._next)
                return
        self._given = False


class TakeTurns:
    """The ASGI middleware: an HTTP request reaches the app on its turn. What it sends
    is passed on untouched, so a stream's events pay nothing for it."""

    def __init__(self, app: Any, turns: Turns) -> None:
        self.app, self.turns = app, turns

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self.turns.take()
        await self.app(scope, receive, send)


def taking_turns() -> Middleware:
    """The middleware for one app (its own ``Turns``), innermost of the app's: the
    latency histograms (``latencies.py``) count the wait for a turn."""
    return Middleware(TakeTurns, turns=Turns())


__all__ = ["TakeTurns", "Turns", "taking_turns"]

"""The budget headers on every response to a keyed request (docs/proxy.md, "Budgets").

An ASGI middleware: when the response starts and the request's key has a budget (its
user's or its team's), the headers of the one with the least left are added
(``standing.BUDGET_HEADERS``: what is left, the limit, when it resets, whose budget).
The counters are read as the response starts, so a stream's headers count its own
reservation. A store that cannot be read leaves the headers out; the answer still goes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from toolwire.proxy.people import Caller, People
from toolwire.proxy.people.standing import standings, tightest

log = logging.getLogger(__name__)


class BudgetHeaders:
    """The middleware (Starlette's ``Middleware(BudgetHeaders, people=...)``)."""

    def __init__(self, app: Any, people: People) -> None:
        self.app, self.people = app, people

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                caller = (scope.get("state") or {}).get("caller")
                if isinstance(caller, Caller) and caller.budgets:
                    extra = await self._headers(caller)
                    message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, sending)

    async def _headers(self, caller: Caller) -> list[tuple[bytes, bytes]]:
        accounts = self.people.accounts

        def read() -> list[tuple[bytes, bytes]]:
            found = tightest(standings(accounts, caller.budgets, caller.budgets))
            return [] if found is None else found.headers()

        try:
            return await asyncio.to_thread(read) if accounts.blocking else read()
        except Exception as e:  # the store is down: the answer matters more
            log.warning("budget headers left out: the store could not be read (%s)",
                        type(e).__name__)  # fmt: skip
            return []


__all__ = ["BudgetHeaders"]

"""One live connection to one server: a task that holds the SDK's client open.

The SDK's client lives in anyio scopes that must be entered and left by one task, while
a session starts, calls and closes its servers from several: so each connection gets a
task of its own that opens the transport and the client, lists the tools, and waits to
be told to stop. The transport's read stream is watched: when it ends (a stdio server
exited) ``lost`` is set, so a dead server is noticed before the next call fails on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import IO, Any, cast

import mcp_types as types
from mcp import Client

from toolwire.mcp.elicit import Elicitor, callback
from toolwire.mcp.spec import ServerSpec
from toolwire.mcp.transports import Watched, kill_group, open_transport, process_group

_CLOSE_WAIT = 10.0
"""Seconds a stop may take: the SDK gives a stdio server 2 s after its stdin closes, 2 s
after SIGTERM, then kills it; an HTTP session ends with one DELETE."""
_MAX_PAGES = 50
"""Tool-list pages read per listing: a server that pages forever cannot hang a start."""


class Link:
    """A connection: ``open`` it, use ``client`` and ``tools``, ``aclose`` it."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        on_tools: Callable[[Link], None],
        errlog: IO[str],
        log: logging.Logger,
        elicitor: Elicitor | None = None,
    ) -> None:
        self.spec = spec
        self._elicitor = elicitor
        self.tools: list[types.Tool] = []
        self.refreshes = 0
        """Tool lists read again after the server said the list changed."""
        self.lost = asyncio.Event()
        """Set when the connection ended without being asked to (the server exited)."""
        self.pgid: int | None = None
        self._on_tools = on_tools
        self._refreshing: set[asyncio.Task[None]] = set()
        self._errlog = errlog
        self._log = log
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._up = False
        """The start finished: ``client`` and ``tools`` are usable."""
        self._asking = "initialize"
        self._unreadable: list[asyncio.Future[str]] = []
        """The request the start waits for (named when its answer cannot be read)."""
        self._task: asyncio.Task[None] | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError("the link is not open")
        return self._client

    async def open(self) -> None:
        """Start the server and list its tools; raises what went wrong (TimeoutError too)."""
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.spec.name}")
        try:
            async with asyncio.timeout(self.spec.timeout):
                await asyncio.shield(self._ready)
        except BaseException:
            await self.aclose()
            raise

    def next_unreadable(self) -> asyncio.Future[str]:
        """A future set to the parser's words when the server next writes a message
        that cannot be parsed (a call waits on it beside its answer)."""
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._unreadable = [w for w in self._unreadable if not w.done()]  # calls that ended
        self._unreadable.append(waiter)
        return waiter

    async def _notified(self, message: Any) -> None:
        if isinstance(message, Exception):
            # The SDK hands over a line it could not parse here and keeps waiting for
            # the answer it was in: during the start that wait would last the whole
            # timeout, so the start fails now, saying why.
            if not self._ready.done():
                unreadable = isinstance(message, ValueError)  # what parsers raise
                error = UnreadableAnswerError(self._asking, message) if unreadable else message
                self._ready.set_exception(error)
            else:
                reason = UnreadableAnswerError.reason(message)
                self._log.warning(
                    "MCP server %r sent a message that could not be parsed: %s",
                    self.spec.name,
                    reason,
                )
                # It may have been a call's answer: the calls waiting now are told, as
                # the SDK would leave them waiting for good.
                waiters, self._unreadable = self._unreadable, []
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(reason)
        elif isinstance(message, types.ToolListChangedNotification):
            # Not inline: the SDK delivers notifications on its receive path, and the
            # refresh is a request whose answer arrives on that same path.
            task = asyncio.create_task(self._refresh())
            self._refreshing.add(task)
            task.add_done_callback(self._refreshing.discard)

    async def _refresh(self) -> None:
        """Read the tool list again; a notice that came during the start waits for it."""
        try:
            await asyncio.shield(self._ready)
            self.tools = await self._list_tools(self.client)
        except Exception as e:
            self._log.warning(
                "MCP server %r: reading its tools again failed: %r", self.spec.name, e
            )
            return
        self.refreshes += 1
        self._on_tools(self)

    async def aclose(self) -> None:
        """Stop the connection and the server; idempotent."""
        self._stop.set()
        for refresh in list(self._refreshing):
            refresh.cancel()
        task = self._task
        if task is not None and not task.done():
            if not self._up:
                # Still starting: nothing to wind down politely, and the SDK would give
                # a server that ignores its closed stdin 2 s more, delaying the session's
                # start. Its shutdown is shielded, so the cancel still reaps the process.
                kill_group(self.pgid)
                task.cancel()
            await asyncio.wait({task}, timeout=_CLOSE_WAIT)
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
        kill_group(self.pgid)

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                transport = open_transport(self.spec, self._errlog)
                streams = await stack.enter_async_context(transport)
                self.pgid = process_group(transport) if self.spec.transport == "stdio" else None
                client = Client(
                    Watched(streams, self._lost),
                    mode="legacy",
                    message_handler=cast(Any, self._notified),
                    cache=None,
                    client_info=types.Implementation(name="toolwire", version=_version()),
                    elicitation_callback=(
                        callback(self.spec.name, self._elicitor) if self._elicitor else None
                    ),
                )
                await stack.enter_async_context(client)
                self._asking = "tools/list"
                self.tools = await self._list_tools(client)
                if self._ready.done():  # failed meanwhile (an answer it could not parse)
                    return
                self._client = client
                self._up = True
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as e:
            if not self._ready.done():
                if isinstance(e, Exception):
                    self._ready.set_exception(e)
                else:
                    self._ready.cancel()
            elif not isinstance(e, asyncio.CancelledError):
                self._log.warning("MCP server %r: connection ended: %r", self.spec.name, e)
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self._client = None
            self._lost()

    def _lost(self) -> None:
        if not self._stop.is_set():
            self.lost.set()

    @staticmethod
    async def _list_tools(client: Client) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools


class UnreadableAnswerError(Exception):
    """The server wrote a message the SDK could not parse (bad JSON, nested too deep)."""

    def __init__(self, request: str, error: Exception) -> None:
        super().__init__(f"its {request} answer could not be parsed: {self.reason(error)}")

    @staticmethod
    def reason(error: Exception) -> str:
        """The parser's own words, one line: pydantic's first error, else the first line."""
        errors = getattr(error, "errors", None)
        if callable(errors):
            try:
                first = errors()[0]
            except Exception:
                first = None
            if isinstance(first, dict) and isinstance(first.get("msg"), str):
                return str(first["msg"])
        lines = str(error).strip().splitlines()
        return lines[0] if lines else type(error).__name__


def _version() -> str:
    from toolwire import __version__

    return __version__


__all__ = ["Link", "UnreadableAnswerError"]

"""``McpHub``: the MCP servers of one ACP session, their tools and their calls."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from typing import IO, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from toolwire.mcp.elicit import Elicitor
from toolwire.mcp.link import Link, UnreadableAnswerError
from toolwire.mcp.names import assign_names
from toolwire.mcp.reasons import died, not_running, start_failure
from toolwire.mcp.result import McpResult, error_result, map_result
from toolwire.mcp.spec import ServerSpec
from toolwire.mcp.tool import McpTool, allowed, from_listing, schema_problem

Progress = Callable[[float, float | None, str | None], None]


class _Server:
    """One server's state across its connections (the first, and the one restart)."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.link: Link | None = None
        self.restarts_left = 1
        self.gone = False
        """Failed for good: not restarted again, its tools withdrawn."""
        self.lock = asyncio.Lock()
        self.watcher: asyncio.Task[None] | None = None


class McpHub:
    """Starts, lists, calls and stops the MCP servers of one session."""

    def __init__(
        self,
        *,
        log: logging.Logger,
        stderr_path: str | None = None,
        elicitor: Elicitor | None = None,
    ) -> None:
        self._log = log
        self._elicitor = elicitor
        """Asks the user what a server wants to know (``elicit``); None: servers are told
        elicitation is not supported."""
        self._stderr_path = stderr_path
        self._errlog: IO[str] | None = None
        self._servers: dict[str, _Server] = {}
        self._tools: dict[str, McpTool] = {}
        self._changed = False
        self._closed = False
        self._dropped: dict[tuple[str, str], str] = {}
        """Tools left out for a schema no builder can send, with the line said about them."""
        self._untold: list[str] = []

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self, specs: Sequence[ServerSpec]) -> list[str]:
        """Start ``specs`` in parallel; one line per server that did not start.

        The first spec of a name wins (pass the editor's before the config's), so a server
        configured in both places runs once.
        """
        failures: list[str] = []
        fresh: list[_Server] = []
        for spec in specs:
            if spec.name in self._servers or any(s.spec.name == spec.name for s in fresh):
                failures.append(
                    f"MCP server {spec.name!r} ({spec.source}) was not started: a server of "
                    "that name is already running; rename one of them"
                )
            elif spec.problem is not None:
                failures.append(f"MCP server {spec.name!r} did not start: {spec.problem}")
            else:
                fresh.append(_Server(spec))
        results = await asyncio.gather(*(self._open(server) for server in fresh))
        failures += [line for line in results if line is not None]
        self._rebuild()
        self._changed = False  # the caller reads tools() after start anyway
        failures += self._untold
        self._untold = []
        return failures

    async def aclose(self) -> None:
        """Stop every server (stdio ones with their process groups); idempotent."""
        self._closed = True
        servers = list(self._servers.values())
        watchers = [s.watcher for s in servers if s.watcher is not None]
        for watcher in watchers:
            watcher.cancel()
        # A restart in progress is inside a watcher: it stops its fresh link on the way out.
        await asyncio.gather(*watchers, return_exceptions=True)
        await asyncio.gather(
            *(s.link.aclose() for s in servers if s.link is not None), return_exceptions=True
        )
        for server in servers:
            server.link = None
        self._tools = {}
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    # -- tools ----------------------------------------------------------------------------

    def tools(self) -> list[McpTool]:
        """The tools of the running servers, filtered by the config, in a stable order."""
        return list(self._tools.values())

    def tool(self, model_name: str) -> McpTool | None:
        return self._tools.get(model_name)

    def changed(self) -> bool:
        """True once after the tool list changed (a server's notice, a server gone)."""
        changed, self._changed = self._changed, False
        return changed

    # -- calls ----------------------------------------------------------------------------

    async def call(
        self,
        model_name: str,
        arguments: dict[str, Any],
        *,
        on_progress: Progress | None = None,
        max_output_bytes: int = 30000,
    ) -> McpResult:
        """Call a tool. Cancelling the awaiting task cancels the call on the server too
        (the SDK sends ``notifications/cancelled``) and re-raises ``CancelledError``."""
        tool = self._tools.get(model_name)
        if tool is None:
            return error_result(f"unknown MCP tool {model_name!r}; it may have been withdrawn")
        server = self._servers[tool.server]
        link = server.link
        if link is None or link.lost.is_set():
            await self._died(server, link)
            if server.link is None:
                return error_result(not_running(server.spec.name, self._stderr_path))
            link = server.link
        progress = _progress(on_progress) if on_progress is not None else None
        try:
            result = await _answer(link, tool.name, arguments, progress)
        except UnreadableAnswerError as e:
            return error_result(f"MCP server {tool.server!r}: {e}; the call's result is lost")
        except MCPError as e:
            if e.code != CONNECTION_CLOSED:
                return error_result(f"MCP server {tool.server!r} refused the call: {e}")
            why = "it exited"
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as e:  # a transport failure: the connection is unusable
            why = f"{type(e).__name__}: {e}"
        else:
            return map_result(result.model_dump(by_alias=True, exclude_none=True), max_output_bytes)
        restarted = await self._died(server, link, why)
        return error_result(
            died(tool.server, why, restarted=restarted, stderr_path=self._stderr_path)
        )

    # -- internals ------------------------------------------------------------------------

    def _errfile(self) -> IO[str]:
        if self._errlog is None:
            path = self._stderr_path or os.devnull
            self._errlog = open(path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
        return self._errlog

    def _new_link(self, server: _Server) -> Link:
        def on_tools(link: Link) -> None:
            if server.link is link:
                self._rebuild()

        log = self._log.getChild(server.spec.name)
        return Link(
            server.spec,
            on_tools=on_tools,
            errlog=self._errfile(),
            log=log,
            elicitor=self._elicitor,
        )

    async def _open(self, server: _Server) -> str | None:
        link = self._new_link(server)
        try:
            await link.open()
        except Exception as e:
            line = start_failure(server.spec, e, self._stderr_path)
            self._log.warning("%s", line)
            return line
        self._servers[server.spec.name] = server
        server.link = link
        server.watcher = asyncio.create_task(self._watch(server, link))
        self._log.info("MCP server %r started: %d tools", server.spec.name, len(link.tools))
        return None

    async def _watch(self, server: _Server, link: Link) -> None:
        """Notice a server that exits while idle, and restart it before it is needed."""
        await link.lost.wait()
        if not self._closed:
            await self._died(server, link, "it exited")

    async def _died(self, server: _Server, link: Link | None, why: str = "it exited") -> bool:
        """Handle a dead connection once: restart it if the server has a restart left.
        True when a fresh connection is up."""
        async with server.lock:
            if server.link is not link:  # already handled by another caller
                return server.link is not None
            server.link = None
            if link is not None:
                await link.aclose()
            if self._closed or server.gone:
                return False
            if server.restarts_left <= 0:
                self._withdraw(server, why)
                return False
            server.restarts_left -= 1
            self._log.warning("MCP server %r: %s; restarting it (once)", server.spec.name, why)
            fresh = self._new_link(server)
            try:
                await fresh.open()
            except Exception as e:
                self._withdraw(server, f"{why}, and the restart failed: {e!r}")
                return False
            if self._closed:  # the session closed while the server restarted
                await fresh.aclose()
                return False
            server.link = fresh
            server.watcher = asyncio.create_task(self._watch(server, fresh))
            self._rebuild()
            return True

    def _withdraw(self, server: _Server, why: str) -> None:
        server.gone = True
        self._log.error(
            "MCP server %r: %s; not restarted again, its tools are withdrawn for this session",
            server.spec.name,
            why,
        )
        self._rebuild()

    def _rebuild(self) -> None:
        """Recompute the tools of running servers; flag a change when they differ."""
        listed: list[tuple[_Server, types.Tool]] = []
        for server in self._servers.values():
            if server.link is None or server.gone:
                continue
            spec = server.spec
            listed += [
                (server, t)
                for t in server.link.tools
                if allowed(t.name, spec.tools_allow, spec.tools_deny)
            ]
        listed = [(s, t) for s, t in listed if self._sendable(s.spec.name, t)]
        names = assign_names((s.spec.name, t.name) for s, t in listed)
        tools = {}
        for server, t in sorted(listed, key=lambda p: names[(p[0].spec.name, p[1].name)]):
            name = names[(server.spec.name, t.name)]
            tools[name] = from_listing(
                t, server=server.spec.name, model_name=name, trusted=server.spec.trusted
            )
        if tools != self._tools:
            self._changed = self._changed or bool(self._tools) or bool(tools)
            self._tools = tools

    def _sendable(self, server: str, tool: types.Tool) -> bool:
        """False for a tool whose schema no builder can send; said once per tool."""
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        problem = schema_problem(schema)
        key = (server, tool.name)
        if problem is None:
            self._dropped.pop(key, None)
            return True
        if key not in self._dropped:
            line = (
                f"MCP server {server!r}: tool {tool.name!r} is not offered: its input "
                f"schema cannot be converted for the model ({problem})"
            )
            self._dropped[key] = line
            self._log.warning("%s", line)
            self._untold.append(line)
        return False


async def _answer(link: Link, name: str, arguments: dict[str, Any], progress: Any) -> Any:
    """The call's result; ``UnreadableAnswerError`` when the server writes a message that
    cannot be parsed meanwhile (most likely this answer, which would never arrive)."""
    call = asyncio.ensure_future(link.client.call_tool(name, arguments, progress_callback=progress))
    unreadable = link.next_unreadable()
    either: set[asyncio.Future[Any]] = {call, unreadable}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not call.done():
            call.cancel()  # also when this task is cancelled: the SDK tells the server
            await asyncio.wait({call})
        unreadable.cancel()
    if call.cancelled() and unreadable.done() and not unreadable.cancelled():
        raise UnreadableAnswerError("tools/call", ValueError(unreadable.result()))
    return call.result()


def _progress(on_progress: Progress) -> Any:
    async def relay(progress: float, total: float | None, message: str | None) -> None:
        with contextlib.suppress(Exception):
            on_progress(progress, total, message)

    return relay


__all__ = ["McpHub"]

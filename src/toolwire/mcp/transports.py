"""The SDK's transports for a ``ServerSpec``, and what toolwire adds around them: the
stdio server's process group, and a read stream that says when the server's side ended.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from toolwire.mcp.spec import ServerSpec

_GUARD = Path(__file__).with_name("guard.py")


def open_transport(spec: ServerSpec, errlog: IO[str]) -> AbstractAsyncContextManager[Any]:
    """The transport for ``spec``: enter it for the (read, write) streams."""
    if spec.transport == "stdio":
        return _stdio(spec, errlog)
    if spec.transport == "sse":
        return sse_client(spec.url or "", headers=dict(spec.headers))
    return _http(spec)


def _stdio(spec: ServerSpec, errlog: IO[str]) -> AbstractAsyncContextManager[Any]:
    env = dict(spec.env) or None
    command, args = guarded(spec.command or "", list(spec.args), env, spec.cwd)
    params = StdioServerParameters(command=command, args=args, env=env, cwd=spec.cwd)
    return stdio_client(params, errlog=cast(TextIO, errlog))


def guarded(
    command: str, args: list[str], env: dict[str, str] | None, cwd: str | None
) -> tuple[str, list[str]]:
    """The server's command run under ``guard.py``, which kills its group when the agent
    dies (a SIGKILL included). A command that cannot be run is left as it is, so its
    start fails as before, saying what is wrong; on Windows the SDK's job object does it.
    """
    if os.name != "posix":
        return command, args
    path = (env or {}).get("PATH", os.environ.get("PATH"))
    if os.sep in command:
        target: str | None = os.path.join(cwd or "", command)
    else:
        target = shutil.which(command, path=path)
    if target is None or not os.path.isfile(target) or not os.access(target, os.X_OK):
        return command, args
    return sys.executable, ["-I", "-S", str(_GUARD), str(os.getpid()), target, *args]


@asynccontextmanager
async def _http(spec: ServerSpec) -> AsyncIterator[Any]:
    async with (
        create_mcp_http_client(headers=dict(spec.headers)) as http,
        streamable_http_client(spec.url or "", http_client=http) as streams,
    ):
        yield streams


def process_group(transport: Any) -> int | None:
    """The stdio server's process group (its pid: the SDK starts it in a new session).

    The SDK does not expose the process; its transport is a suspended generator that
    holds it as a local, so it is read there. None when that ever changes: the SDK's own
    shutdown still kills the group when the server outlives its stdin.
    """
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = frame.f_locals.get("process") if frame is not None else None
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


def kill_group(pgid: int | None) -> None:
    """SIGKILL what is left of a stdio server's group (children that outlived it)."""
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


class Watched:
    """A transport whose read stream calls ``on_end`` when the server's side ends."""

    def __init__(self, streams: Any, on_end: Callable[[], None]) -> None:
        self._streams = streams
        self._on_end = on_end

    async def __aenter__(self) -> Any:
        read, write = self._streams
        return _WatchedRead(read, self._on_end), write

    async def __aexit__(self, *exc: object) -> None:
        return None


class _WatchedRead:
    """The SDK's read stream, passed through; its end (EOF, closed) is reported once."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise StopAsyncIteration from None

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.aclose()


__all__ = ["Watched", "guarded", "kill_group", "open_transport", "process_group"]

"""Helpers for the MCP tests: specs for the test servers, process checks."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.npm import npm_installed
from toolwire.mcp import McpHub, ServerSpec

HERE = Path(__file__).parent
EDGE = HERE / "servers" / "edge.py"
SCHEMAS = HERE / "servers" / "schemas.py"
STUBBORN = HERE / "servers" / "stubborn.py"
EVERYTHING = (
    HERE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def edge(name: str = "edge", mode: str = "serve", **kw: Any) -> ServerSpec:
    """The Python test server (servers/edge.py) as a stdio spec."""
    return ServerSpec(
        name=name, transport="stdio", command=sys.executable, args=(str(EDGE), mode), **kw
    )


def live_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that still run (zombies, already dead, do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ")".
        state, _ppid, pgrp = stat.rpartition(")")[2].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def groups(hub: McpHub) -> list[int]:
    """The process groups of the hub's running stdio servers."""
    out = []
    for server in hub._servers.values():
        if server.link is not None and server.link.pgid is not None:
            out.append(server.link.pgid)
    return out


def assert_gone(pgids: list[int], within: float = 5.0) -> None:
    """Nothing of these process groups is left running."""
    deadline = time.monotonic() + within
    left = [m for g in pgids for m in live_members(g)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [m for g in pgids for m in live_members(g)]
    assert not left, f"server processes left running: {left}"


def hub(stderr_path: str | None = None) -> McpHub:
    return McpHub(log=logging.getLogger("tests.mcp"), stderr_path=stderr_path)


async def until(check: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def everything_script() -> Path:
    """The reference server's entry point, installed from tests/mcp's lock file if needed."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the server-everything tests need Node.js")
    npm_installed(HERE, EVERYTHING, "make mcp-deps")
    return EVERYTHING


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def everything_http(mode: str, log: Path) -> Iterator[str]:
    """server-everything serving ``mode`` (streamableHttp or sse) on a local port; its URL."""
    script = everything_script()
    port = free_port()
    with log.open("w") as err:
        proc = subprocess.Popen(
            ["node", str(script), mode],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        # It says "... port N" on stderr once it listens.
        while f"port {port}" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "server-everything did not listen in 30 s"
            time.sleep(0.05)
        path = "/mcp" if mode == "streamableHttp" else "/sse"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(10)


__all__ = [
    "EDGE",
    "alive",
    "assert_gone",
    "edge",
    "everything_http",
    "everything_script",
    "free_port",
    "groups",
    "hub",
    "live_members",
    "run",
    "until",
]

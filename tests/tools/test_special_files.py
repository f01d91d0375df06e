"""Named pipes, sockets and other non-regular files: never opened for content, never hang.

Opening a FIFO for reading blocks until a writer comes, and a worker thread stuck there
used to keep the whole agent alive. Every test runs the tool under a 5 s guard that, on
the way out, opens the FIFO's write end once: a reader stuck in ``open`` then sees end of
file, so a regression fails the test instead of blocking the run.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Awaitable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.tools.support import make_project
from toolwire.agent.session.permissions import preview
from toolwire.tools import LocalFileSystem, ToolContext, ToolResult, atomic_write, get_tool
from toolwire.tools.search import in_thread

T = TypeVar("T")
GUARD_S = 5.0
KINDS = ("fifo", "socket", "link-to-fifo")


def release(fifo: Path) -> None:
    """Let any reader stuck opening ``fifo`` go: a writer opens the pipe and closes it."""
    for _ in range(100):
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return  # ENXIO: nobody waits to read (or it is no FIFO any more)
        os.close(fd)


def guarded(work: Awaitable[T], fifo: Path) -> T:
    """Run ``work`` in a fresh loop; a hang fails after ``GUARD_S`` instead of blocking."""

    async def bounded() -> T:
        try:
            return await asyncio.wait_for(work, GUARD_S)
        finally:
            release(fifo)

    return asyncio.run(bounded())


def run_guarded(name: str, args: Mapping[str, Any], ctx: ToolContext, fifo: Path) -> ToolResult:
    tool = get_tool(name)
    assert tool is not None
    return guarded(tool.run(args, ctx), fifo)


@pytest.fixture
def special(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[ToolContext, str]]:
    """A project with ``a.txt`` (text ``x``), a FIFO ``pipe`` and the special file under test.

    Yields the context and the name to hand the tools.
    """
    ctx = make_project(tmp_path)
    (ctx.cwd / "a.txt").write_text("x\n", encoding="utf-8")
    os.mkfifo(ctx.cwd / "pipe")
    kind: str = request.param
    if kind == "fifo":
        yield ctx, "pipe"
    elif kind == "link-to-fifo":
        (ctx.cwd / "pipe-link").symlink_to(ctx.cwd / "pipe")
        yield ctx, "pipe-link"
    else:
        # Bound by a relative name: an absolute tmp path can pass AF_UNIX's 108 bytes.
        here = os.getcwd()
        os.chdir(ctx.cwd)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind("sock")
        finally:
            os.chdir(here)
        try:
            yield ctx, "sock"
        finally:
            sock.close()


def fifo_of(ctx: ToolContext) -> Path:
    return ctx.cwd / "pipe"


def still_special(ctx: ToolContext, name: str) -> bool:
    mode = os.stat(ctx.cwd / name).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@pytest.mark.parametrize("special", KINDS, indirect=True)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("Read", {}),
        ("Write", {"content": "new\n"}),
        ("Edit", {"old_string": "", "new_string": "new\n"}),
        ("Edit", {"old_string": "a", "new_string": "b"}),
    ],
)
def test_file_tools_refuse_a_special_file_with_one_clear_line(
    special: tuple[ToolContext, str], tool: str, extra: dict[str, Any]
) -> None:
    ctx, name = special
    result = run_guarded(tool, {"file_path": name, **extra}, ctx, fifo_of(ctx))
    assert result.is_error
    assert "not a regular file" in result.content
    assert "\n" not in result.content
    assert still_special(ctx, name)  # a refused Write leaves the pipe or socket alone


@pytest.mark.parametrize("special", KINDS, indirect=True)
def test_grep_refuses_a_special_file_as_its_path(special: tuple[ToolContext, str]) -> None:
    ctx, name = special
    result = run_guarded("Grep", {"pattern": "x", "path": name}, ctx, fifo_of(ctx))
    assert result.is_error
    assert "not a regular file" in result.content


@pytest.mark.parametrize("special", KINDS, indirect=True)
@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
def test_grep_walks_past_special_files(special: tuple[ToolContext, str], mode: str) -> None:
    ctx, _ = special
    result = run_guarded("Grep", {"pattern": "x", "output_mode": mode}, ctx, fifo_of(ctx))
    assert not result.is_error
    assert result.content.split("\n")[0].startswith("a.txt")
    assert len(result.content.split("\n")) == 1


@pytest.mark.parametrize("special", KINDS, indirect=True)
def test_glob_lists_regular_files_only(special: tuple[ToolContext, str]) -> None:
    ctx, _ = special
    result = run_guarded("Glob", {"pattern": "*"}, ctx, fifo_of(ctx))
    assert result.content == "a.txt"


@pytest.mark.parametrize("special", KINDS, indirect=True)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [("Write", {"content": "new\n"}), ("Edit", {"old_string": "", "new_string": "new\n"})],
)
def test_the_approval_preview_does_not_open_a_special_file(
    special: tuple[ToolContext, str], tool: str, extra: dict[str, Any]
) -> None:
    ctx, name = special
    found = get_tool(tool)
    assert found is not None
    assert guarded(preview(found, {"file_path": name, **extra}, ctx), fifo_of(ctx)) is None


def test_the_local_file_system_refuses_a_fifo_both_ways(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    fs = LocalFileSystem()
    with pytest.raises(OSError, match="not a regular file"):
        guarded(fs.read_text(fifo), fifo)
    with pytest.raises(OSError, match="not a regular file"):
        guarded(fs.write_text(fifo, "x"), fifo)
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write(fifo, b"x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def _exits_with_a_thread_stuck(setup: str, call: str) -> None:
    """A fresh interpreter starts ``call`` (a coroutine that blocks a worker thread for
    ever), cancels it, and must still exit: the thread cannot hold the process."""
    script = (
        "import asyncio, threading\n"
        "stuck = threading.Event()\n"
        f"{setup}\n"
        "async def main():\n"
        f"    task = asyncio.create_task({call})\n"
        "    await asyncio.sleep(0.05)\n"
        "    task.cancel()\n"
        "asyncio.run(main())\n"
        "print('exited')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert done.stdout == "exited\n", done.stderr


def test_a_search_thread_stuck_in_the_kernel_does_not_hold_the_process_at_exit() -> None:
    """The worker thread of a cancelled call is a daemon: interpreter exit does not wait."""
    _exits_with_a_thread_stuck(
        "from toolwire.tools.search import in_thread", "in_thread(lambda stop: stuck.wait())"
    )


def test_a_file_read_stuck_in_the_kernel_does_not_hold_the_process_at_exit() -> None:
    _exits_with_a_thread_stuck(
        "from pathlib import Path\nfrom toolwire.tools import fs\n"
        "fs.read_regular = lambda path: stuck.wait()",
        "fs.LocalFileSystem().read_text(Path('/x'))",
    )


def test_cancelled_search_threads_still_end_on_stop() -> None:
    stopped = threading.Event()

    def work(stop: threading.Event) -> int:
        stop.wait()
        stopped.set()
        return 0

    async def scenario() -> None:
        task = asyncio.create_task(in_thread(work))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert stopped.wait(2)

"""The terminal session shared by ``toolwire client`` and ``toolwire demo``: one console,
prompts, the agent's stderr, and the closing summary. Imported when one of them runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from toolwire.cli._io import fail
from toolwire.client import LineReader, TerminalClient, summary_lines
from toolwire.client.run import RunOutcome, on_interrupt

STDERR_TAIL = 15
"""Lines of the agent's standard error shown when a run fails."""


def make_console(*, plain: bool) -> tuple[Console, bool]:
    """The one console a command prints through, and whether to render live.

    Live on a terminal unless ``plain``. Plain output is never re-wrapped, so pipes and
    tests get the same text at any width; live output is wrapped to the screen (the
    redrawn region must fit it).
    """
    console = Console(file=sys.stdout, highlight=False, emoji=False, markup=False)
    live = console.is_terminal and not plain
    console.soft_wrap = not live
    return console, live


async def one_prompt(text: str) -> AsyncIterator[str]:
    """A prompt source of exactly one prompt."""
    yield text


async def typed_prompts(reader: LineReader, console: Console) -> AsyncIterator[str]:
    """Prompts typed by the user (or piped in), until end of input or Ctrl-C."""
    ask = sys.stdin.isatty()
    while True:
        if ask:
            console.print(Text("you> ", style="bold cyan"), end="")
        read = asyncio.ensure_future(reader.readline())
        with on_interrupt(read.cancel):
            try:
                line = await read
            except asyncio.CancelledError:
                line = None
        if line is None:
            if ask:
                console.print()
            return
        if line.strip():
            yield line


@contextlib.contextmanager
def agent_stderr(path: Path | None) -> Iterator[IO[bytes]]:
    """Where the agent's stderr goes: FILE, else a temporary file shown on failure."""
    if path is None:
        with tempfile.TemporaryFile() as temp:
            yield temp
        return
    try:
        handle = path.open("wb")
    except OSError as e:
        fail(f"cannot write {path}: {e.strerror or e}")
    with handle:
        yield handle


def finish(
    console: Console,
    session: TerminalClient,
    outcome: RunOutcome,
    log: IO[bytes],
    log_path: Path | None = None,
) -> None:
    """Print the summary; on failure, what went wrong and the agent's last stderr lines."""
    console.print()
    for line in summary_lines(session.view, outcome.last_stop, session.files.stats):
        console.print(line)
    if outcome.error is None:
        return
    console.print(Text(f"error: {outcome.error}", style="bold red"))
    if log_path is not None:
        console.print(Text(f"the agent's stderr is in {log_path}", style="dim"))
        return
    for text in stderr_tail(log):
        console.print(Text(f"  agent stderr: {text}", style="dim"))


def stderr_tail(log: IO[Any], lines: int = STDERR_TAIL) -> list[str]:
    """The last lines the agent wrote to its stderr (a seekable file)."""
    with contextlib.suppress(OSError, ValueError):
        log.flush()
        log.seek(0)
        text = log.read()
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        return [str(t) for t in text.splitlines()[-lines:]]
    return []


__all__ = [
    "agent_stderr",
    "finish",
    "make_console",
    "one_prompt",
    "stderr_tail",
    "typed_prompts",
]

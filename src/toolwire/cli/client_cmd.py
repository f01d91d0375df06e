"""``toolwire client -- CMD ARGS...``: drive any ACP agent with the terminal client.

For people building agents: it shows what the agent really streams (tool calls as they
start, titles refining, diffs, plan, text) and ends with what it cost on the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from toolwire.cli._io import fail
from toolwire.client import AgentCommand, LineReader, TerminalClient, run_agent, summary_lines
from toolwire.client.run import RunOutcome, on_interrupt

STDERR_TAIL = 15
"""Lines of the agent's standard error shown when a run fails."""


def make_console(plain: bool) -> tuple[Console, bool]:
    """The one console a command prints through (STYLE 14), and whether to render live.

    Live on a terminal unless ``plain``. Plain output is never re-wrapped, so pipes and
    tests get the same text at any width; live output is wrapped to the screen (the
    redrawn region must fit it).
    """
    console = Console(file=sys.stdout, highlight=False, emoji=False, markup=False)
    live = console.is_terminal and not plain
    console.soft_wrap = not live
    return console, live


def client(
    command: Annotated[
        list[str],
        typer.Argument(metavar="-- CMD ARGS...", help="The agent command, after --."),
    ],
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", metavar="DIR", help="Session directory. Default: the current one."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow every permission request once, unasked.")
    ] = False,
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", "-p", metavar="TEXT", help="Send TEXT as one turn, then exit."),
    ] = None,
    plain: Annotated[bool, typer.Option("--plain", help="Line-by-line output.")] = False,
    agent_log: Annotated[
        Path | None,
        typer.Option("--agent-log", metavar="FILE", help="Write the agent's stderr to FILE."),
    ] = None,
) -> None:
    """Run an ACP agent: initialize, session/new, then --prompt or prompts typed (Ctrl-C
    cancels a turn, Ctrl-D ends)."""
    root = (cwd or Path.cwd()).resolve()
    if not root.is_dir():
        fail(f"--cwd {root} is not a directory")
    console, live = make_console(plain)
    reader = LineReader()
    terminal = TerminalClient.for_terminal(console, root, live=live, auto_allow=yes, reader=reader)
    if not sys.stdin.isatty():
        terminal.permissions.auto = True  # nobody to ask: allow once, and say so
    agent = AgentCommand(command[0], tuple(command[1:]))
    prompts = one_prompt(prompt) if prompt is not None else typed_prompts(reader, console)
    with agent_stderr(agent_log) as log:
        outcome = asyncio.run(run_agent(agent, terminal, prompts, stderr=log))
        finish(console, terminal, outcome, log, agent_log)
    if outcome.error:
        raise typer.Exit(1)


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


__all__ = ["agent_stderr", "client", "finish", "make_console", "one_prompt", "typed_prompts"]

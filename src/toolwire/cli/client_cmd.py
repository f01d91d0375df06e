"""``toolwire client -- CMD ARGS...``: drive any ACP agent with the terminal client.

For people building agents: it shows what the agent really streams (tool calls as they
start, titles refining, diffs, plan, text) and ends with what it cost on the wire.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolwire.cli._io import fail


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
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Allow every permission request once, unasked. Off by default: you are "
            "asked, and with no terminal to ask (a pipe, a script) requests are rejected.",
        ),
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
    if not _run(command, root, yes=yes, prompt=prompt, plain=plain, agent_log=agent_log):
        raise typer.Exit(1)


def _run(
    command: list[str],
    root: Path,
    *,
    yes: bool,
    prompt: str | None,
    plain: bool,
    agent_log: Path | None,
) -> bool:
    """Drive the agent through its session with the terminal client; whether it went
    without an error."""
    import asyncio

    from toolwire.cli._console import agent_stderr, finish, make_console, one_prompt, typed_prompts
    from toolwire.client import AgentCommand, LineReader, TerminalClient, run_agent

    console, live = make_console(plain=plain)
    reader = LineReader()
    terminal = TerminalClient.for_terminal(console, root, live=live, auto_allow=yes, reader=reader)
    if not sys.stdin.isatty():
        terminal.permissions.reader = None  # nobody to ask: rejected unless --yes
    # The user's whole environment, as a shell would pass it: the SDK's default keeps
    # only HOME, PATH and a few more, so the agent would see no API key and no config.
    agent = AgentCommand(command[0], tuple(command[1:]), dict(os.environ))
    prompts = one_prompt(prompt) if prompt is not None else typed_prompts(reader, console)
    with agent_stderr(agent_log) as log:
        outcome = asyncio.run(run_agent(agent, terminal, prompts, stderr=log))
        finish(console, terminal, outcome, log, agent_log)
    return not outcome.error


__all__ = ["client"]

"""``toolwire demo``: the whole pipeline offline, rendered live in the terminal.

The agent (``toolwire acp``) runs on the bundled replay cassette, in a scratch copy of
the bundled project, driven by the terminal client with permissions allowed once; then
the project's own tests are run to show the fix worked. No network, no API key.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolwire.cli._io import fail
from toolwire.samples import DEMO_CASSETTE, DEMO_PROMPT, copy_demo_project

if TYPE_CHECKING:
    from rich.console import Console

    from toolwire.client import AgentCommand

TEST_COMMAND = ("-m", "unittest", "-q")
TEST_TIMEOUT = 120


def demo(
    speed: Annotated[
        float,
        typer.Option(min=0.0, help="Replay speed: 2 is twice as fast, 0 as fast as possible."),
    ] = 1.0,
    keep: Annotated[
        Path | None,
        typer.Option("--keep", metavar="DIR", help="Put the project copy in DIR and keep it."),
    ] = None,
    plain: Annotated[bool, typer.Option("--plain", help="Line-by-line output.")] = False,
) -> None:
    """Replay a recorded coding session through the agent, live; exit 0 if it fixed the bug."""
    import asyncio

    from rich.text import Text

    from toolwire.cli._console import agent_stderr, finish, make_console, one_prompt
    from toolwire.client import TerminalClient, run_agent

    console, live = make_console(plain=plain)
    with tempfile.TemporaryDirectory(prefix="toolwire-demo-") as scratch_dir:
        scratch = Path(scratch_dir)
        project = _project(keep, scratch)
        agent = demo_agent(paced_cassette(speed, scratch), scratch)
        console.print(Text("toolwire demo: a recorded session, replayed (no network, no key)"))
        console.print(Text(f"project: {project}", style="dim"))
        session = TerminalClient.for_terminal(
            console, project, live=live, auto_allow=True, reader=None
        )
        with agent_stderr(None) as log:
            outcome = asyncio.run(run_agent(agent, session, one_prompt(DEMO_PROMPT), stderr=log))
            finish(console, session, outcome, log)
        passed = run_tests(project, console)
    ok = outcome.error is None and outcome.last_stop == "end_turn" and passed
    verdict = Text("demo ok", "bold green") if ok else Text("demo failed", "bold red")
    console.print(verdict)
    if not ok:
        raise typer.Exit(1)


def _project(keep: Path | None, scratch: Path) -> Path:
    if keep is None:
        return copy_demo_project(scratch / "project").resolve()
    target = keep.expanduser().resolve()
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()  # an empty directory is as good as none
    if target.exists():
        fail(f"--keep {keep}: already exists and is not empty; give a new directory")
    return copy_demo_project(target)


def paced_cassette(speed: float, scratch: Path) -> Path:
    """The demo cassette played at ``speed`` (a scaled copy unless ``speed`` is 1)."""
    if speed == 1.0:
        return DEMO_CASSETTE
    lines = []
    for line in DEMO_CASSETTE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        delay = float(entry.get("chunk_delay_ms", 0))
        entry["chunk_delay_ms"] = 0 if speed == 0 else round(delay / speed, 3)
        lines.append(json.dumps(entry))
    scaled = scratch / DEMO_CASSETTE.name
    scaled.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return scaled


def demo_agent(cassette: Path, scratch: Path) -> AgentCommand:
    """``python -m toolwire acp`` on the cassette, isolated from the user's setup."""
    from toolwire.client import AgentCommand

    config = scratch / "config.toml"
    config.write_text("# toolwire demo: the user's config is not used\n", encoding="utf-8")
    env = {
        # The cassette's Bash step runs `python`: make it this interpreter (SOURCES.md).
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "TOOLWIRE_CONFIG": str(config),
        "XDG_DATA_HOME": str(scratch / "data"),  # the session store: not the user's
    }
    args = ("-m", "toolwire", "acp", "--backend", f"replay:{cassette}", "--mode", "accept-edits")
    return AgentCommand(sys.executable, args, env)


def run_tests(project: Path, console: Console) -> bool:
    """Run the project's tests; print the verdict and, on failure, the last lines."""
    from rich.text import Text

    command = [sys.executable, *TEST_COMMAND]
    shown = "python " + " ".join(TEST_COMMAND)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            command, cwd=project, capture_output=True, text=True, timeout=TEST_TIMEOUT, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        console.print(Text(f"✗ tests: {shown} could not run: {e}", style="red"))
        return False
    output = (done.stdout + done.stderr).strip()
    ran = re.search(r"Ran (\d+) tests?", output)
    count = f"{ran.group(1)} tests" if ran else "no test count"
    if done.returncode == 0:
        console.print(Text(f"✓ tests pass afterwards: {shown} ({count}, OK)", style="green"))
        return True
    console.print(Text(f"✗ tests fail afterwards: {shown} ({count})", style="red"))
    for line in output.splitlines()[-10:]:
        console.print(Text(f"    {line}", style="dim"))
    return False


__all__ = ["demo", "demo_agent", "paced_cassette", "run_tests"]

"""``toolwire client`` driving a small ACP agent built on the official SDK's agent side."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.cli._console import one_prompt
from toolwire.client import AgentCommand, TerminalClient, run_agent

pytestmark = pytest.mark.e2e

FAKE_AGENT = Path(__file__).parents[1] / "fakes" / "acp_agent.py"

EDIT_OUTPUT = """\
agent: Fake agent 0.0.1, ACP v1
session sess_fake in {cwd}
> fix it
Let me look at the notes.
Plan:
  [>] Read the notes
  [ ] Fix the typo
▸ Read
  ↳ Read notes.txt
  ⋯ running Read notes.txt
✓ Read notes.txt
▸ Edit
  ↳ Edit notes.txt
  allowed once (auto): Edit notes.txt
✓ Edit notes.txt
    --- a/notes.txt
    +++ b/notes.txt
    @@ -1 +1 @@
    -teh quick fox
    +the quick fox
Fixed the typo.

Summary
  tool calls     2 (2 completed, 0 failed)
  notifications  10
  bytes          {received} received; a naive stream would need {naive} ({saved} saved)
  file system    1 read, 1 write, 0 refused
  stop reason    end_turn
"""


def _invoke(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    command = ["client", "--cwd", str(cwd), *args, "--", sys.executable, str(FAKE_AGENT)]
    result = CliRunner().invoke(app, command, input=stdin)
    return result.exit_code, result.stdout


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("teh quick fox\n", encoding="utf-8")
    return root.resolve()


def test_one_prompt_with_permission_and_files(tmp_path: Path) -> None:
    root = _project(tmp_path)
    code, out = _invoke(root, "--prompt", "fix it", "--yes")
    assert code == 0, out
    sizes = out.split("bytes          ")[1].split("\n")[0]
    received = sizes.split(" received")[0]
    naive = sizes.split("would need ")[1].split(" (")[0]
    saved = sizes.split(" (")[1].split(" saved")[0]
    assert out == EDIT_OUTPUT.format(cwd=root, received=received, naive=naive, saved=saved)
    assert int(naive.replace(",", "")) > int(received.replace(",", ""))
    assert (root / "notes.txt").read_text(encoding="utf-8") == "the quick fox\n"


def test_prompts_read_from_standard_input(tmp_path: Path) -> None:
    root = _project(tmp_path)
    code, out = _invoke(root, "--yes", stdin="\nfirst\nsecond\n")
    assert code == 0, out
    assert out.count("stop reason") == 1  # one summary, at the end
    assert "> first\n" in out
    assert "> second\n" in out
    assert out.count("allowed once (auto)") == 2
    # The fake agent reuses its tool-call ids in the second turn: the client says so.
    assert "  warning: tool_call sent again for r1\n" in out


def test_piped_without_yes_approves_nothing_and_says_how_once(tmp_path: Path) -> None:
    root = _project(tmp_path)
    code, out = _invoke(root, stdin="fix it\nfix it again\n")
    assert code == 0, out
    assert (root / "notes.txt").read_text(encoding="utf-8") == "teh quick fox\n"
    assert "allowed" not in out
    assert out.count("rejected (nobody to ask): Edit notes.txt") == 2
    assert out.count("run `toolwire client --yes` to allow") == 1
    assert "0 writes" in out


def test_help_presents_approval_as_opt_in() -> None:
    result = CliRunner().invoke(app, ["client", "--help"], env={"COLUMNS": "200"})
    assert "--yes" in result.stdout
    assert "Off by default" in result.stdout


def test_a_path_outside_the_session_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    command = ["client", "--cwd", str(root), "-p", "x", "--", sys.executable, str(FAKE_AGENT)]
    result = CliRunner().invoke(app, [*command, "escape"])
    assert result.exit_code == 0, result.stdout
    assert "✗ Read ../secret.txt (failed)\n    client refused: " in result.stdout
    assert "outside the session directory" in result.stdout
    assert "0 reads, 0 writes, 1 refused" in result.stdout


def test_an_agent_that_cannot_start(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["client", "--cwd", str(tmp_path), "-p", "x", "--", str(tmp_path / "nope")]
    )
    assert result.exit_code == 1
    assert "error: cannot run " in result.stdout
    assert "stop reason    none (the turn did not finish)" in result.stdout


def test_an_agent_that_exits_shows_its_stderr(tmp_path: Path) -> None:
    crash = "import sys; print('boom: no config', file=sys.stderr); sys.exit(3)"
    command = ["client", "--cwd", str(tmp_path), "-p", "x", "--", sys.executable, "-c", crash]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 1
    assert "error: the agent closed the connection (did it exit?)" in result.stdout
    assert "  agent stderr: boom: no config\n" in result.stdout


def test_agent_log_option(tmp_path: Path) -> None:
    log = tmp_path / "agent.log"
    root = _project(tmp_path)
    code, _ = _invoke(root, "-p", "x", "--agent-log", str(log))
    assert code == 0
    assert log.exists()


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to this process")
def test_ctrl_c_cancels_the_turn(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, highlight=False, soft_wrap=True)
    client = TerminalClient.for_terminal(
        console, tmp_path, live=False, auto_allow=True, reader=None
    )
    agent = AgentCommand(sys.executable, (str(FAKE_AGENT), "wait"))

    def interrupt_when_running() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            call = client.view.tool_calls.get("b1")
            if call is not None and call.status == "in_progress":
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=interrupt_when_running, daemon=True)
    watcher.start()
    outcome = asyncio.run(run_agent(agent, client, one_prompt("wait")))
    watcher.join()
    assert outcome.error is None
    assert outcome.stop_reasons == ["cancelled"]
    assert "cancelling the turn (Ctrl-C again to stop waiting)" in out.getvalue()
    assert "✗ Run sleep (failed)" in out.getvalue()

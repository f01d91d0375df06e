"""``toolwire decode`` and ``toolwire acp`` without typer answer exactly as typer does.

Each command line runs twice in a fresh interpreter: through the console script (which
routes a plain command line past typer) and through the typer application itself. Both
must print the same bytes on each stream and exit with the same status, for good
command lines and bad ones alike (those the router hands to typer, and those it runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

SAMPLE = str(resources.files("toolwire.samples").joinpath("anthropic_edit.sse"))
SCRIPT = str(Path(sys.executable).parent / "toolwire")
TYPER = "from toolwire.cli._app import app; app(prog_name='toolwire')"


def _both(argv: list[str], stdin: bytes, tmp_path: Path) -> list[tuple[int, bytes, bytes]]:
    env = os.environ | {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "COLUMNS": "90"}
    env.pop("TOOLWIRE_CONFIG", None)
    runs = []
    for command in ([SCRIPT], [sys.executable, "-c", TYPER]):
        done = subprocess.run(
            [*command, *argv], input=stdin, capture_output=True, timeout=60, env=env, check=False
        )
        runs.append((done.returncode, done.stdout, done.stderr))
    return runs


CASES = [
    ["decode", SAMPLE],
    ["decode"],
    ["decode", "-"],
    ["decode", "--format", "anthropic", "--chunk-size", "5", "-"],
    ["decode", "--only=tool_call_start,message_end", "-f", "anthropic", SAMPLE],
    ["decode", "--", SAMPLE],
    ["decode", "--only", "text_delta,nonsense", SAMPLE],
    ["decode", "--format", "nope", SAMPLE],
    ["decode", "--chunk-size", "0", SAMPLE],
    ["decode", "--chunk-size", "many", SAMPLE],
    ["decode", "--chunk-size"],
    ["decode", SAMPLE, SAMPLE],
    ["decode", "--bogus", SAMPLE],
    ["decode", "--format", "-"],
    ["decode", "/no/such/stream.sse"],
    ["decode", "--help"],
    ["decode", "--format", "qwen3_coder", "--tools", "/no/such/tools.json", "-"],
    ["acp", "--mode", "nonsense"],
    ["acp", "--mode=plan", "--backend", "no-such-backend"],
    ["acp", "--config", "/no/such/config.toml"],
    ["acp", "extra"],
    ["acp", "--help"],
]


@pytest.mark.parametrize(
    "argv", CASES, ids=lambda argv: " ".join("SAMPLE" if a == SAMPLE else a for a in argv)
)
def test_the_routed_command_line_answers_as_typer_does(argv: list[str], tmp_path: Path) -> None:
    with open(SAMPLE, "rb") as sample:
        stdin = sample.read()
    routed, typer = _both(argv, stdin if argv[0] == "decode" else b"", tmp_path)
    assert routed == typer


def test_tools_routed_as_typer_reads_them(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "Read", "parameters": {"properties": {"n": {"type": "integer"}}}}]')
    text = b'<|python_tag|>{"name": "Read", "parameters": {"n": 5}}'
    argv = ["decode", "--format", "llama3_json", "--tools", str(tools), "-"]
    routed, typer = _both(argv, text, tmp_path)
    assert routed == typer
    assert b'"arguments": {"n": 5}' in routed[1]

"""Claude Code on a local model whose server leaks its tool calls as text (ollama#16686:
Claude Code then waits forever) finishes its task through ``toolwire proxy``, which
rescues the calls (docs/decoding.md, "Rescue"). How the pinned CLI runs offline:
``tests/proxy/test_claude_code.py``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.http import FakeServer
from tests.fakes.leaky import DONE, leaky_for
from tests.proxy.support import running, write_config
from tests.proxy.test_claude_code import RUN_TIMEOUT, _blocks, _claude, _environment, _final
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e

APP = "def greet():\n    return 'hi'\n"


def _run(command: list[str], project: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [
            *command,
            "-p",
            "Make greet() say hello.",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "local,qwen3",
            "--allowedTools",
            "Read,Edit,Bash",
            "--max-turns",
            "6",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _task(tmp_path: Path, rescue: str | None) -> tuple[list[dict[str, Any]], Path, int]:
    """Claude Code's run of the task; the file it works on; the upstream's request count."""
    command = _claude()
    project = tmp_path / "project"
    project.mkdir()
    app = project / "app.py"
    app.write_text(APP, encoding="utf-8")
    with FakeServer(leaky_for(str(app))) as upstream:
        config = write_config(tmp_path, upstream.url, upstream.url)
        if rescue is not None:
            text = config.read_text().replace(
                'model = "qwen3"', f'model = "qwen3"\nrescue = "{rescue}"'
            )
            config.write_text(text)
        with running(load_settings(config)) as url:
            events = _run(command, project, _environment(tmp_path, url))
    return events, app, len(upstream.requests)


def test_claude_code_runs_the_calls_a_local_server_leaked(tmp_path: Path) -> None:
    events, app, requests = _task(tmp_path, None)
    uses = [b for b in _blocks(events, "assistant") if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["Read", "Edit", "Bash"]
    results = [b for b in _blocks(events, "user") if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert not any(r.get("is_error") for r in results), results
    assert app.read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    assert _final(events)["result"] == DONE
    texts = "".join(b["text"] for b in _blocks(events, "assistant") if b["type"] == "text")
    assert "<function=" not in texts
    assert "tool_call>" not in texts
    assert requests == 4


def test_with_rescue_off_claude_code_gets_the_markup_as_its_answer(tmp_path: Path) -> None:
    events, app, requests = _task(tmp_path, "off")
    assert [b for b in _blocks(events, "assistant") if b["type"] == "tool_use"] == []
    assert "<function=Read>" in _final(events)["result"]
    assert app.read_text(encoding="utf-8") == APP
    assert requests == 1

"""opencode itself, run headless (``opencode run``) through ``toolwire proxy``'s Chat
Completions route (docs/proxy.md, "Codex CLI, opencode and gemini-cli end to end").

The real ``opencode`` (``opencode-ai``, pinned in ``tests/opencode/package-lock.json``;
``make opencode-cli`` installs it, or this test on first run) gets a throwaway ``HOME``
and XDG folders whose ``opencode.json`` names one OpenAI-compatible provider, the
proxy's ``/v1`` with a fake key, with the auto-updater, the models.dev fetch, LSP
downloads and sharing off. It still looks ``registry.npmjs.org`` up at start-up and runs
on when that fails: the test passes with no network at all.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scripted import Call, problems_seen
from tests.npm import npm_installed
from tests.proxy.cli_support import BACKENDS, ledger_rows, proxied

pytestmark = pytest.mark.e2e

OPENCODE_DIR = Path(__file__).parents[1] / "opencode"
OPENCODE = OPENCODE_DIR / "node_modules" / ".bin" / "opencode"
RUN_TIMEOUT = 60
APP = "def greet():\n    return 'hi'\n"
RUN = "python3 -c 'import app; print(app.greet())'"
DONE = "Done: greet() now says hello."


def _opencode() -> list[str]:
    """The command that runs the installed opencode, installing it first if needed."""
    npm_installed(OPENCODE_DIR, OPENCODE, "make opencode-cli", ci=False)
    probe = subprocess.run(
        [str(OPENCODE), "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0 or probe.stdout.strip() != "1.18.33":
        pytest.fail(f"the installed opencode does not run:\n{probe.stdout}{probe.stderr}")
    return [str(OPENCODE)]


def _environment(tmp: Path, url: str) -> dict[str, str]:
    home = tmp / "home"
    folders = {f"XDG_{k}_HOME": str(home / k.lower()) for k in ("CONFIG", "DATA", "CACHE", "STATE")}
    config = Path(folders["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "toolwire",
        "options": {"baseURL": f"{url}/v1", "apiKey": "sk-test-opencode"},
        "models": {"qwen3": {"name": "qwen3", "tool_call": True}},
    }
    settings = {
        "provider": {"toolwire": provider},
        "model": "toolwire/qwen3",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow"},
    }
    config.write_text(json.dumps(settings), encoding="utf-8")
    off = ("AUTOUPDATE", "MODELS_FETCH", "LSP_DOWNLOAD", "DEFAULT_PLUGINS")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        **folders,
        **{f"OPENCODE_DISABLE_{name}": "1" for name in off},
    }


def _run(command: list[str], project: Path, env: dict[str, str], prompt: str) -> list[Any]:
    """One ``opencode run --format json``; its JSON events."""
    done = subprocess.run(
        [*command, "run", "--format", "json", "--auto", prompt],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"opencode exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _task(app: Path) -> list[Call]:
    return [
        ("call_read", "read", {"filePath": str(app)}),
        ("call_edit", "edit", {"filePath": str(app), "oldString": "'hi'", "newString": "'hello'"}),
        ("call_run", "bash", {"command": RUN, "description": "Run greet()"}),
    ]


@pytest.mark.parametrize("family", ["anthropic", "openai"])
def test_opencode_reads_edits_and_runs_through_the_proxy(tmp_path: Path, family: str) -> None:
    command = _opencode()
    project = tmp_path / "project"
    project.mkdir()
    app = project / "app.py"
    app.write_text(APP, encoding="utf-8")
    with proxied(tmp_path, family, _task(app), DONE) as proxy:
        events = _run(command, project, _environment(tmp_path, proxy.url), "Say hello.")
    assert app.read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    _check_run(events)
    upstream = proxy.upstreams[family]
    assert problems_seen(family, upstream.requests) == []
    posts = [r for r in upstream.requests if r.method == "POST"]
    assert len(posts) == 5  # the title, then the task's four
    assert sum(1 for r in posts if not r.json().get("tools")) == 1
    last = json.dumps(posts[-1].json())
    assert "return 'hi'" in last  # the file read
    assert "hello" in last  # the command's output
    rows = ledger_rows(proxy.ledger, 5)
    assert [(r["backend"], r["status"]) for r in rows] == [(BACKENDS[family], "ok")] * 5
    sessions = {e["sessionID"] for e in events}
    assert {r["session"] for r in rows} == sessions  # its title request's too


def _check_run(events: list[Any]) -> None:
    """opencode ran the three tools, each to completion, and printed the closing text."""
    tools = [e["part"] for e in events if e["type"] == "tool_use"]
    assert [(t["tool"], t["state"]["status"]) for t in tools] == [
        ("read", "completed"),
        ("edit", "completed"),
        ("bash", "completed"),
    ]
    assert "return 'hi'" in tools[0]["state"]["output"]
    assert tools[2]["state"]["output"].strip() == "hello"
    assert [e["part"]["text"] for e in events if e["type"] == "text"] == [DONE]

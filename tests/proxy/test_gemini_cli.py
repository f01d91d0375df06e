"""gemini-cli itself, run headless (``gemini -p``) through ``toolwire proxy``'s Gemini
routes (docs/proxy.md, "Codex CLI, opencode and gemini-cli end to end").

The real ``gemini`` (``@google/gemini-cli``, pinned in ``tests/gemini/package-lock.json``;
``make gemini-cli`` installs it, or this test on first run) gets a throwaway ``HOME``
whose ``.gemini/settings.json`` picks API-key auth and turns off the update check,
telemetry and usage statistics, and also (most are off by default) the side requests it
would make without tools and read back as JSON (the next-speaker check, loop detection,
edit correction): the proxy serves no ``responseJsonSchema``, so the scripted upstream
answers them with a line of text, and a run with the next-speaker check on did not end
in two minutes.
``GOOGLE_GEMINI_BASE_URL`` points it at the proxy, ``GEMINI_API_KEY`` holds the proxy's
token (sent as ``x-goog-api-key``) and ``GEMINI_CLI_CUSTOM_HEADERS`` names the session.
It makes no other connection: the test passes with no network at all.
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

GEMINI_DIR = Path(__file__).parents[1] / "gemini"
PACKAGE = GEMINI_DIR / "node_modules" / "@google" / "gemini-cli"
RUN_TIMEOUT = 90
TOKEN = "tw-test-gemini"
SESSION = "gemini-e2e"
APP = "def greet():\n    return 'hi'\n"
RUN = "python3 -c 'import app; print(app.greet())'"
DONE = "Done: greet() now says hello."
SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "model": {"skipNextSpeakerCheck": True, "disableLoopDetection": True},
    "tools": {"disableLLMCorrection": True},
}


def _gemini(tmp: Path) -> list[str]:
    """The command that runs the installed gemini-cli, installing it first if needed."""
    npm_installed(GEMINI_DIR, PACKAGE / "package.json", "make gemini-cli")
    command = [str(GEMINI_DIR / "node_modules" / ".bin" / "gemini")]
    probe = subprocess.run(
        [*command, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp)},  # it writes there
    )
    if probe.returncode != 0 or probe.stdout.strip() != "0.61.0":
        pytest.fail(f"the installed gemini-cli does not run:\n{probe.stdout}{probe.stderr}")
    return command


def _environment(tmp: Path, url: str) -> dict[str, str]:
    home = tmp / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": TOKEN,
        "GEMINI_CLI_CUSTOM_HEADERS": f"x-toolwire-session:{SESSION}",
    }


def _run(command: list[str], project: Path, env: dict[str, str], prompt: str) -> dict[str, Any]:
    """One ``gemini -p --yolo -o json``; its JSON answer."""
    flags = ["-m", "gemini-2.5-flash", "--yolo", "--skip-trust", "-o", "json"]
    done = subprocess.run(
        [*command, *flags, "-p", prompt],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"gemini exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _task(app: Path) -> list[Call]:
    edit = {"file_path": str(app), "old_string": "'hi'", "new_string": "'hello'"}
    return [
        ("call_read", "read_file", {"file_path": str(app)}),
        ("call_edit", "replace", {**edit, "instruction": "Make greet() say hello."}),
        ("call_run", "run_shell_command", {"command": RUN, "description": "Run greet()"}),
    ]


def _tool_names(family: str, body: dict[str, Any]) -> list[str]:
    tools = body["tools"]
    return [t["name"] if family == "anthropic" else t["function"]["name"] for t in tools]


@pytest.mark.parametrize("family", ["anthropic", "openai"])
def test_gemini_cli_reads_edits_and_runs_through_the_proxy(tmp_path: Path, family: str) -> None:
    command = _gemini(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    app = project / "app.py"
    app.write_text(APP, encoding="utf-8")
    with proxied(tmp_path, family, _task(app), DONE, extra=f'token = "{TOKEN}"') as proxy:
        answer = _run(command, project, _environment(tmp_path, proxy.url), "Say hello.")
    assert app.read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    assert answer["response"] == DONE
    tools = answer["stats"]["tools"]
    assert {n: (t["count"], t["success"]) for n, t in tools["byName"].items()} == {
        "read_file": (1, 1),
        "replace": (1, 1),
        "run_shell_command": (1, 1),
    }
    upstream = proxy.upstreams[family]
    assert problems_seen(family, upstream.requests) == []
    assert proxy.upstreams["anthropic" if family == "openai" else "openai"].requests == []
    posts = [r for r in upstream.requests if r.method == "POST"]
    assert len(posts) == 4  # no side request: each asks for the task's next step
    assert {"read_file", "replace", "run_shell_command"} <= set(
        _tool_names(family, posts[0].json())
    )
    last = json.dumps(posts[-1].json())
    assert "return 'hi'" in last  # the file read
    assert "Output: hello" in last  # the command's output
    rows = ledger_rows(proxy.ledger, 4)
    assert [(r["backend"], r["status"]) for r in rows] == [(BACKENDS[family], "ok")] * 4
    assert {r["session"] for r in rows} == {SESSION}  # GEMINI_CLI_CUSTOM_HEADERS's

"""Codex CLI itself, run headless (``codex exec``) through ``toolwire proxy``'s Responses
route (docs/proxy.md, "Codex CLI, opencode and gemini-cli end to end").

The real ``codex`` (``@openai/codex``, pinned in ``tests/codex/package-lock.json``;
``make codex-cli`` installs it, or this test on first run) gets a throwaway
``CODEX_HOME`` whose ``config.toml`` names one model provider, the proxy's ``/v1`` with
``wire_api = "responses"`` and a fake key, the update check and analytics off. It makes
no other connection (it still looks up ``github.com``, ``api.github.com`` and
``chatgpt.com``, and connects to none): the test passes with no network at all. The
model it asks for is ``gpt-5.5``, one whose metadata it ships, so it offers
``apply_patch`` as a freeform (``custom``) tool; the proxy routes the name it does not
know to its default backend.
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
from tests.proxy.support import switch_cli

pytestmark = pytest.mark.e2e

CODEX_DIR = Path(__file__).parents[1] / "codex"
PACKAGE = CODEX_DIR / "node_modules" / "@openai" / "codex"
RUN_TIMEOUT = 60
APP = "def greet():\n    return 'hi'\n"
PATCH = (
    "*** Begin Patch\n*** Update File: app.py\n@@\n def greet():\n"
    "-    return 'hi'\n+    return 'hello'\n*** End Patch\n"
)
RUN = "python3 -c 'import app; print(app.greet())'"
TASK: list[Call] = [
    ("call_read", "exec_command", {"cmd": "cat app.py"}),
    ("call_edit", "apply_patch", {"input": PATCH}),
    ("call_run", "exec_command", {"cmd": RUN}),
]
DONE = "Done: greet() now says hello."


def _codex() -> list[str]:
    """The command that runs the installed Codex CLI, installing it first if needed."""
    npm_installed(CODEX_DIR, PACKAGE / "package.json", "make codex-cli")
    command = [str(CODEX_DIR / "node_modules" / ".bin" / "codex")]
    probe = subprocess.run(
        [*command, "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0 or "0.171.0" not in probe.stdout:
        pytest.fail(f"the installed Codex CLI does not run:\n{probe.stdout}{probe.stderr}")
    return command


def _home(tmp: Path, url: str) -> Path:
    home = tmp / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f"""model = "gpt-5.5"
model_provider = "toolwire"
check_for_update_on_startup = false
[analytics]
enabled = false
[model_providers.toolwire]
name = "toolwire"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "TOOLWIRE_TEST_KEY"
""",
        encoding="utf-8",
    )
    return home


def _exec(command: list[str], home: Path, project: Path, *args: str) -> list[dict[str, Any]]:
    """One ``codex exec --json`` run (or ``exec resume``); its JSONL events."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "TOOLWIRE_TEST_KEY": "sk-test-codex",
    }
    flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"]
    done = subprocess.run(
        [*command, "exec", *flags, "-C", str(project), *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"codex exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == kind
    ]


def _tool_names(family: str, body: dict[str, Any]) -> list[str]:
    tools = body["tools"]
    return [t["name"] if family == "anthropic" else t["function"]["name"] for t in tools]


def _project(tmp: Path) -> Path:
    project = tmp / "project"
    project.mkdir()
    (project / "app.py").write_text(APP, encoding="utf-8")
    return project


@pytest.mark.parametrize("family", ["anthropic", "openai"])
def test_codex_reads_patches_and_runs_through_the_proxy(tmp_path: Path, family: str) -> None:
    command = _codex()
    project = _project(tmp_path)
    with proxied(tmp_path, family, TASK, DONE) as proxy:
        events = _exec(command, _home(tmp_path, proxy.url), project, "Make greet() say hello.")
    upstream = proxy.upstreams[family]
    assert (project / "app.py").read_text(encoding="utf-8") == APP.replace("'hi'", "'hello'")
    runs = _items(events, "command_execution")
    assert [c in r["command"] for r, c in zip(runs, ["cat app.py", RUN], strict=True)] == [True] * 2
    assert [r["exit_code"] for r in runs] == [0, 0]
    assert "return 'hi'" in runs[0]["aggregated_output"]
    assert runs[1]["aggregated_output"].strip() == "hello"
    assert [c["path"] for f in _items(events, "file_change") for c in f["changes"]] == [
        str(project / "app.py")
    ]
    assert [m["text"] for m in _items(events, "agent_message")] == [DONE]
    posts = [r for r in upstream.requests if r.method == "POST"]
    assert len(posts) == 4
    assert problems_seen(family, upstream.requests) == []
    assert proxy.upstreams["anthropic" if family == "openai" else "openai"].requests == []
    assert "apply_patch" in _tool_names(family, posts[0].json())  # the freeform tool, offered
    last = json.dumps(posts[-1].json())
    assert "return 'hi'" in last  # the file read
    assert "hello" in last  # the command's output
    rows = ledger_rows(proxy.ledger, 4)
    assert [(r["backend"], r["status"]) for r in rows] == [(BACKENDS[family], "ok")] * 4
    assert len({r["session"] for r in rows}) == 1


NOTES = "alpha = 7\nbeta = 9\n"
# The first run reads the notes on the first backend and stops; the resumed one, after
# the switch, runs one more command on the second and answers (each upstream counts the
# tool results a request carries to know its step).
SWITCH_TASK: list[Call] = [
    ("call_read", "exec_command", {"cmd": "cat notes.txt"}),
    ("call_count", "exec_command", {"cmd": "wc -l notes.txt"}),
]


def test_a_codex_session_switched_mid_task_keeps_what_it_read_and_ran(tmp_path: Path) -> None:
    command = _codex()
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    with proxied(tmp_path, "openai", SWITCH_TASK[:1], "Read.", (SWITCH_TASK, "beta = 9")) as proxy:
        home = _home(tmp_path, proxy.url)
        first = _exec(command, home, project, "Read notes.txt.")
        (thread,) = [e["thread_id"] for e in first if e["type"] == "thread.started"]
        (session,) = {r["session"] for r in ledger_rows(proxy.ledger, 2)}
        assert session == thread  # Codex names its thread in prompt_cache_key
        switched = switch_cli(proxy.url, proxy.config, "claude", session)
        assert switched.returncode == 0, switched.stderr
        second = _exec(command, home, project, "resume", thread, "What is beta?")
    chat, anthropic = proxy.upstreams["openai"].requests, proxy.upstreams["anthropic"].requests
    assert (len(chat), len(anthropic)) == (2, 2)
    assert problems_seen("openai", chat) == []
    assert problems_seen("anthropic", anthropic) == []
    # The new backend's first request holds the read: Codex's call and the file's text.
    history = anthropic[0].json()["messages"]
    uses = [b for m in history if isinstance(m["content"], list) for b in m["content"]]
    (read,) = [b for b in uses if b["type"] == "tool_use"]
    assert read["name"] == "exec_command"
    assert "cat notes.txt" in json.dumps(read["input"])
    (result,) = [b for b in uses if b["type"] == "tool_result"]
    assert result["tool_use_id"] == read["id"]
    assert all(line in json.dumps(result["content"]) for line in NOTES.splitlines())
    runs = _items(second, "command_execution")
    assert ["wc -l notes.txt" in r["command"] for r in runs] == [True]
    assert [m["text"] for m in _items(second, "agent_message")] == ["beta = 9"]
    rows = ledger_rows(proxy.ledger, 4)
    assert [r["backend"] for r in rows] == ["local", "local", "claude", "claude"]
    assert {r["session"] for r in rows} == {session}

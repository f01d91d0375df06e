"""Claude Code itself, run headless through ``toolwire proxy`` (docs/proxy.md).

The real ``claude`` CLI (``@anthropic-ai/claude-code``, pinned in
``tests/claude/package-lock.json``; ``make claude-code`` installs it, or this test on
first run) talks to the proxy on loopback; the proxy talks to fake upstreams that speak
the providers' streaming wire formats (``tests/fakes/http.py``). Nothing leaves the
machine: the environment is built from scratch (throwaway ``HOME``, a fake key, the
nonessential traffic, telemetry and the auto-updater off), and the only connections the
CLI makes with it are to ``ANTHROPIC_BASE_URL`` (a ``HEAD /`` warm-up, then
``POST /v1/messages?beta=true``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply, sse
from tests.npm import npm_installed
from tests.proxy.support import (
    anthropic_stream,
    anthropic_text_stream,
    chat_chunk,
    openai_text_stream,
    running,
    switch_cli,
    write_config,
)
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e

CLAUDE_DIR = Path(__file__).parents[1] / "claude"
PACKAGE = CLAUDE_DIR / "node_modules" / "@anthropic-ai" / "claude-code"
NOTES = "alpha = 7\nbeta = 9\n"
RUN_TIMEOUT = 60


def _claude() -> list[str]:
    """The command that runs the installed Claude Code, installing it first if needed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Claude Code test needs Node.js >= 18")
    npm_installed(CLAUDE_DIR, PACKAGE / "package.json", "make claude-code")
    native = [str(CLAUDE_DIR / "node_modules" / ".bin" / "claude")]
    # Without its postinstall step (npm run with scripts disabled) bin/claude is a stub;
    # the package's own wrapper then finds and runs the platform binary.
    problems = []
    for command in (native, [node, str(PACKAGE / "cli-wrapper.cjs")]):
        try:
            probe = subprocess.run(
                [*command, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
        except OSError as exc:  # the stub is not executable at all
            problems.append(f"{command[-1]}: {exc}")
            continue
        if probe.returncode == 0 and "Claude Code" in probe.stdout:
            return command
        problems.append(f"{command[-1]}: {probe.stdout}{probe.stderr}")
    pytest.fail("the installed Claude Code does not run:\n" + "\n".join(problems))


def _environment(tmp: Path, proxy_url: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "sk-test-claude-code",
        "ANTHROPIC_BASE_URL": proxy_url,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


def _run(
    command: list[str], project: Path, env: dict[str, str], model: str, *args: str
) -> list[dict[str, Any]]:
    """One headless ``claude -p`` run; its stream-json events."""
    done = subprocess.run(
        [
            *command,
            "-p",
            *args,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            model,
            "--allowedTools",
            "Read",
            "--max-turns",
            "4",
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


def _project(tmp: Path) -> Path:
    project = tmp / "project"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    return project


def _read_call(path: Path) -> list[bytes]:
    """An OpenAI Chat stream that calls ``Read`` on ``path``."""
    arguments = json.dumps({"file_path": str(path)})
    function = {"name": "Read", "arguments": ""}
    named = {"index": 0, "id": "call_r1", "type": "function", "function": function}
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": ""})),
        (None, chat_chunk({"tool_calls": [named]})),
        (None, chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})),
        (None, chat_chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]
    return [sse([event]) for event in events]


def _blocks(events: list[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    """The content blocks of the ``role`` messages in a stream-json run."""
    return [
        block
        for event in events
        if event["type"] == role and isinstance(event["message"]["content"], list)
        for block in event["message"]["content"]
    ]


def _read_result(events: list[dict[str, Any]], path: Path) -> str:
    """Checks the run called Read on ``path`` and returns the tool result Claude Code sent."""
    (use,) = [b for b in _blocks(events, "assistant") if b["type"] == "tool_use"]
    assert (use["name"], use["input"]) == ("Read", {"file_path": str(path)})
    (result,) = [b for b in _blocks(events, "user") if b["type"] == "tool_result"]
    assert result["tool_use_id"] == use["id"]
    content = result["content"]
    if isinstance(content, list):
        content = "".join(b["text"] for b in content if b["type"] == "text")
    assert isinstance(content, str)
    for line in NOTES.splitlines():
        assert line in content
    return content


def _final(events: list[dict[str, Any]]) -> dict[str, Any]:
    result = events[-1]
    assert result["type"] == "result"
    assert (result["subtype"], result["is_error"]) == ("success", False), result
    return result


def _chat_tool_results(request: Received) -> list[str]:
    return [m["content"] for m in request.json()["messages"] if m["role"] == "tool"]


def _anthropic_tool_results(request: Received) -> list[Any]:
    return [
        block["content"]
        for message in request.json()["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_claude_code_tool_loop_through_the_proxy(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    notes = project / "notes.txt"
    with FakeServer() as upstream:
        upstream.script(
            Reply(chunks=_read_call(notes)),
            Reply(chunks=openai_text_stream("The notes say alpha = 7.")),
        )
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url))
        with running(settings) as url:
            events = _run(
                command, project, _environment(tmp_path, url), "local,qwen3", "Read notes.txt"
            )
    assert events[0]["type"] == "system"
    assert events[0]["subtype"] == "init"
    sent = _read_result(events, notes)
    texts = [b["text"] for b in _blocks(events, "assistant") if b["type"] == "text"]
    assert texts[-1] == "The notes say alpha = 7."
    assert _final(events)["result"] == "The notes say alpha = 7."
    first, second = upstream.requests
    assert [first.path, second.path] == ["/v1/chat/completions"] * 2
    assert first.json()["model"] == second.json()["model"] == "qwen3"
    assert first.json()["stream"] is True
    assert any(t["function"]["name"] == "Read" for t in first.json()["tools"])
    assert _chat_tool_results(first) == []
    assert _chat_tool_results(second) == [sent]


def test_claude_code_switch_sends_the_file_read_before_it(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    notes = project / "notes.txt"
    with FakeServer() as first_up, FakeServer() as second_up:
        first_up.script(
            Reply(chunks=_read_call(notes)),
            Reply(chunks=openai_text_stream("Read it.")),
        )
        second_up.script(Reply(chunks=anthropic_text_stream("beta = 9, from the notes.")))
        # A mapped model name: after a switch the session's backend wins over the map
        # (an explicit "backend,model" would not).
        config = write_config(
            tmp_path, first_up.url, second_up.url, '[proxy.models]\n"sonnet-test" = "local"'
        )
        with running(load_settings(config)) as url:
            env = _environment(tmp_path, url)
            before = _run(command, project, env, "sonnet-test", "Read notes.txt")
            session = before[0]["session_id"]
            switched = switch_cli(url, config, "claude", session)
            assert switched.returncode == 0, switched.stderr
            after = _run(command, project, env, "sonnet-test", "--resume", session, "What is beta?")
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    sent = _read_result(before, notes)
    assert _final(before)["result"] == "Read it."
    assert after[0]["session_id"] == session
    assert _final(after)["result"] == "beta = 9, from the notes."
    assert len(first_up.requests) == 2
    assert _chat_tool_results(first_up.requests[1]) == [sent]
    (request,) = second_up.requests
    assert request.path == "/v1/messages"
    assert request.json()["model"] == "claude-up"
    assert _anthropic_tool_results(request) == [sent]
    assert "toolwire_proxy_switches_total 1" in metrics


def test_claude_code_gets_anthropic_passed_through_with_its_thinking(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    notes = project / "notes.txt"
    thought = {"type": "thinking", "thinking": "Read the notes.", "signature": "U2lnbmVkQnlVcA=="}
    read = {"type": "tool_use", "id": "toolu_01R", "name": "Read", "input": {}}
    read["input"] = {"file_path": str(notes)}
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(
            Reply(chunks=anthropic_stream([thought, read], "tool_use")),
            Reply(chunks=anthropic_text_stream("alpha = 7.")),
        )
        # Claude Code's own model name, mapped: it treats the answer as Claude's.
        models = '[proxy.models]\n"claude-opus-5-5" = "claude"'
        config = write_config(tmp_path, openai_up.url, anthropic_up.url, models)
        text = config.read_text().replace(
            'model = "claude-up"', 'model = "claude-up"\npassthrough = "full"'
        )
        config.write_text(text)
        with running(load_settings(config)) as url:
            env = _environment(tmp_path, url)
            events = _run(command, project, env, "claude-opus-5-5", "Read notes.txt")
    sent = _read_result(events, notes)
    assert _final(events)["result"] == "alpha = 7."
    # Claude Code got the upstream's thinking whole, signature included.
    assert thought in _blocks(events, "assistant")
    first, second = anthropic_up.requests
    # Claude Code's own body and headers went upstream (full pass-through).
    assert first.headers.get("anthropic-beta")
    assert second.headers["anthropic-beta"] == first.headers["anthropic-beta"]
    assert "cache_control" in first.body.decode()
    assert first.json()["thinking"]
    # This Claude Code does not send thinking back inside a tool loop. The proxy knows the
    # turn is the upstream's own (by its tool id), so the thinking parameter stays: it is
    # dropped only for a turn that lost thinking it had (another backend's, or unknown).
    assert second.json()["thinking"] == first.json()["thinking"]
    (turn,) = [m for m in second.json()["messages"] if m["role"] == "assistant"]
    assert turn["content"] == [read]
    assert _anthropic_tool_results(second) == [sent]

"""Claude Code's real tool set, through the proxy to Gemini and OpenAI, meets their rules.

The pinned CLI sends its own tool definitions (``tests/proxy/test_claude_code.py`` says
how it runs, offline); the fake upstreams keep what the proxy sent them, and the
providers' documented rules (``tests/backends/gemini_rules.py``, ``tool_rules.py``) find
nothing a real API would refuse with a 400.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backends import gemini_rules, tool_rules
from tests.fakes.http import FakeServer, Received, Reply, sse
from tests.proxy.support import openai_text_stream, running, write_config
from tests.proxy.test_claude_code import (
    NOTES,
    _claude,
    _environment,
    _final,
    _project,
    _read_result,
    _run,
)
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e


def _gemini_text(text: str) -> bytes:
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    return sse([(None, {"candidates": [candidate], "responseId": "r1"})])


def test_claude_code_tools_reach_gemini_and_openai_as_they_accept_them(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    with FakeServer() as gemini_up, FakeServer() as openai_up:
        gemini_up.script(Reply(chunks=[_gemini_text("Fine.")]))
        openai_up.script(Reply(chunks=openai_text_stream("Fine.")))
        extra = f'[backends.gem]\nprovider = "gemini"\nbase_url = "{gemini_up.url}"\nmodel = "g"'
        config = write_config(tmp_path, openai_up.url, openai_up.url, extra)
        with running(load_settings(config)) as url:
            env = _environment(tmp_path, url)
            assert _final_text(_run(command, project, env, "gem,g", "Say fine.")) == "Fine."
            assert _final_text(_run(command, project, env, "local,qwen3", "Say fine.")) == "Fine."
    gemini_body = gemini_up.requests[0].json()
    declarations = gemini_body["tools"][0]["functionDeclarations"]
    assert {"Bash", "Read", "Edit", "Write"} <= {d["name"] for d in declarations}
    problems = gemini_rules.request_violations(gemini_body, allowed=gemini_rules.CONSERVATIVE)
    assert problems == []
    chat_tools = openai_up.requests[0].json()["tools"]
    assert len(chat_tools) == len(declarations)
    for tool in chat_tools:
        assert tool_rules.chat_violations(tool) == [], tool["function"]["name"]
    _keep(tmp_path, gemini_body)


def test_claude_code_runs_a_read_loop_through_gemini(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    notes = project / "notes.txt"
    call = {"functionCall": {"name": "Read", "args": {"file_path": str(notes)}}}
    candidate = {"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}
    replies = [Reply(chunks=[sse([(None, {"candidates": [candidate]})])])]
    replies.append(Reply(chunks=[_gemini_text("alpha = 7.")]))

    def respond(request: Received) -> Reply:
        # A fake Gemini: what the real API refuses is refused here, with its words.
        problems = gemini_rules.request_violations(request.json())
        if problems:
            return Reply(400, [json.dumps({"error": {"message": problems[0]}}).encode()])
        return replies.pop(0) if replies else Reply(500, [b"no scripted reply"])

    with FakeServer(respond) as gemini_up, FakeServer() as unused:
        extra = f'[backends.gem]\nprovider = "gemini"\nbase_url = "{gemini_up.url}"\nmodel = "g"'
        config = write_config(tmp_path, unused.url, unused.url, extra)
        with running(load_settings(config)) as url:
            events = _run(command, project, _environment(tmp_path, url), "gem,g", "Read notes.txt")
    sent = _read_result(events, notes)
    assert _final(events)["result"] == "alpha = 7."
    first, second = gemini_up.requests
    assert ":streamGenerateContent" in first.path
    turns = second.json()["contents"]
    assert turns[-2]["role"] == "model"
    assert turns[-2]["parts"][-1]["functionCall"]["name"] == "Read"
    (response,) = [p["functionResponse"] for p in turns[-1]["parts"] if "functionResponse" in p]
    assert response["name"] == "Read"
    output = json.dumps(response["response"])
    assert all(line in output for line in NOTES.splitlines())
    assert sent


def _final_text(events: list[dict[str, object]]) -> object:
    return [e for e in events if e.get("type") == "result"][-1].get("result")


def _keep(tmp: Path, body: object) -> None:
    # What was sent, for a reader of a failure (pytest keeps the last tmp directories).
    (tmp / "gemini_request.json").write_text(json.dumps(body, indent=1), encoding="utf-8")

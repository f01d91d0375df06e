"""Claude Code's WebSearch behind the proxy, on a backend with no search of its own.

The pinned CLI (see ``test_claude_code.py``) asks the main model; the fake OpenAI-Chat
upstream calls ``WebSearch``; Claude Code then sends its own search request (the
``web_search_20250305`` server tool); the proxy offers the upstream a ``web_search``
function, runs the model's call against a fake SearXNG, continues the upstream with the
results and answers Claude Code with Anthropic's ``server_tool_use`` and
``web_search_tool_result`` blocks. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.http import FakeServer, Received, Reply, sse
from tests.proxy.support import (
    chat_chunk,
    message_text,
    openai_text_stream,
    running,
    write_config,
)
from tests.proxy.test_claude_code import RUN_TIMEOUT, _blocks, _claude, _environment, _project
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e

QUERY = "python asyncio timeout"
HITS = [
    {
        "title": "asyncio.timeout — Python docs",
        "url": "https://docs.python.org/3/library/asyncio-task.html#timeouts",
        "content": "Use asyncio.timeout() as an async context manager.",
    },
    {
        "title": "PEP 654",
        "url": "https://peps.python.org/pep-0654/",
        "content": "Exception groups and except*.",
    },
]
SUMMARY = "The Python docs describe asyncio.timeout()."
FINAL = "Use asyncio.timeout(), per the Python docs."


def _call(name: str, arguments: dict[str, Any], ident: str) -> list[bytes]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    named = {"index": 0, "id": ident, "type": "function", "function": function}
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": ""})),
        (None, chat_chunk({"tool_calls": [named]})),
        (None, chat_chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]
    return [sse([event]) for event in events]


def _tool_names(request: Received) -> set[str]:
    return {t["function"]["name"] for t in request.json().get("tools") or []}


def _answered(request: Received) -> bool:
    return bool(request.json()["messages"][-1]["role"] == "tool")


def _upstream(request: Received) -> Reply:
    """A model that searches when it can and answers once it has results."""
    tools = _tool_names(request)
    if "web_search" in tools or "WebSearch" not in tools:  # Claude Code's search request
        if _answered(request):
            return Reply(chunks=openai_text_stream(SUMMARY))
        return Reply(chunks=_call("web_search", {"query": QUERY}, "call_s1"))
    if _answered(request):
        return Reply(chunks=openai_text_stream(FINAL))
    return Reply(chunks=_call("WebSearch", {"query": QUERY}, "call_w1"))


def _searxng(request: Received) -> Reply:
    body = json.dumps({"query": QUERY, "results": HITS}).encode()
    return Reply(chunks=[body], content_type="application/json")


def _run(command: list[str], project: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    argv = ["-p", "Search the web: how do I time out asyncio code?"]
    argv += ["--output-format", "stream-json", "--verbose", "--model", "local,qwen3"]
    argv += ["--allowedTools", "WebSearch", "--max-turns", "4"]
    done = subprocess.run(
        [*command, *argv],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_claude_code_searches_through_the_proxy(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    with FakeServer(_upstream) as upstream, FakeServer(_searxng) as searxng:
        web = f'[tools.web]\nsearch = "searxng"\nsearxng_url = "{searxng.url}"\n'
        config = write_config(tmp_path, upstream.url, upstream.url)
        config.write_text(config.read_text() + web, encoding="utf-8")
        with running(load_settings(config)) as url:
            events = _run(command, project, _environment(tmp_path, url))
    (tmp_path / "events.json").write_text(json.dumps(events, indent=1), encoding="utf-8")
    # Claude Code called WebSearch and got the proxy's results as its tool result.
    (use,) = [b for b in _blocks(events, "assistant") if b["type"] == "tool_use"]
    assert (use["name"], use["input"]) == ("WebSearch", {"query": QUERY})
    (result,) = [b for b in _blocks(events, "user") if b["type"] == "tool_result"]
    shown = message_text(result["content"])
    for hit in HITS:
        assert hit["url"] in shown
        assert hit["title"] in shown
    assert SUMMARY in shown
    # What Claude Code displays as "Did 1 search": its own reading of the proxy's blocks.
    (read,) = [e["tool_use_result"] for e in events if e.get("tool_use_result")]
    assert read["searchCount"] == 1
    assert read["results"][0]["tool_use_id"].startswith("srvtoolu_")
    assert events[-1]["result"] == FINAL
    (query,) = [r.path for r in searxng.requests]
    assert "q=python+asyncio+timeout" in query or "q=python%20asyncio%20timeout" in query
    # The upstream's continued search request carried the results, snippets included.
    searched = [r for r in upstream.requests if "web_search" in _tool_names(r)]
    continued = [r for r in searched if _answered(r)]
    assert len(continued) == 1
    tool_message = continued[0].json()["messages"][-1]["content"]
    for hit in HITS:
        assert hit["url"] in tool_message
        assert hit["content"] in tool_message

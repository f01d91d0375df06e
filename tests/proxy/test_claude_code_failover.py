"""Claude Code through a failing primary: its task completes on the fallback.

The pinned CLI (``tests/proxy/test_claude_code.py`` says how it runs, offline) talks to
the proxy; the primary upstream answers once, then 429, then 529 overloaded, then resets
the connection; the secondary answers each time. Both speak Anthropic's format and sign
their thinking, so the test can check that each receives only its own thinking back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.support import anthropic_stream, running, write_config
from tests.proxy.test_claude_code import _blocks, _claude, _environment, _final, _project, _run
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e

PRIMARY_SIGNATURE = "U2lnbmVkQnlQcmltYXJ5"
SECONDARY_SIGNATURE = "U2lnbmVkQnlTZWNvbmRhcnk="


def _thought(text: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature}


def _answer(thought: str, text: str) -> Reply:
    blocks = [_thought(thought, SECONDARY_SIGNATURE), {"type": "text", "text": text}]
    return Reply(chunks=anthropic_stream(blocks, "end_turn"))


def _signatures(request: Received) -> set[str]:
    """The signatures of the thinking blocks a request carried back."""
    return {
        str(block.get("signature"))
        for message in request.json()["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") in ("thinking", "redacted_thinking")
    }


def test_claude_code_completes_through_the_fallback(tmp_path: Path) -> None:
    command = _claude()
    project = _project(tmp_path)
    notes = project / "notes.txt"
    read = {"type": "tool_use", "id": "toolu_01P", "name": "Read", "input": {}}
    read["input"] = {"file_path": str(notes)}
    overloaded = (
        b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    )
    with FakeServer() as primary, FakeServer() as secondary, FakeServer() as unused:
        primary.script(
            Reply(
                chunks=anthropic_stream([_thought("Read it.", PRIMARY_SIGNATURE), read], "tool_use")
            ),
            Reply(429, [b'{"type": "error", "error": {"type": "rate_limit_error"}}']),
            Reply(529, [overloaded]),
            Reply(reset=True),
        )
        secondary.script(
            _answer("The file is read.", "alpha = 7."),
            _answer("Beta is in the notes.", "beta = 9."),
            _answer("Nothing more.", "Done."),
        )
        # A tiny cooldown: each request tries the primary first again (not sticky).
        extra = (
            "failover_cooldown = 0.001\n"
            '[proxy.models]\n"claude-opus-5-5" = "claude"\n'
            f'[backends.backup]\nprovider = "anthropic"\nbase_url = "{secondary.url}"\n'
            'model = "backup-up"\npassthrough = "full"'
        )
        config = write_config(tmp_path, unused.url, primary.url, extra)
        primary_table = 'model = "claude-up"\npassthrough = "full"\nfallbacks = ["backup"]'
        config.write_text(config.read_text().replace('model = "claude-up"', primary_table))
        with running(load_settings(config)) as url:
            env = _environment(tmp_path, url)
            model = "claude-opus-5-5"
            first = _run(command, project, env, model, "Read notes.txt")
            session = first[0]["session_id"]
            second = _run(command, project, env, model, "--resume", session, "What is beta?")
            third = _run(command, project, env, model, "--resume", session, "Anything else?")
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    _keep(tmp_path, primary, secondary)
    assert [_final(run)["result"] for run in (first, second, third)] == [
        "alpha = 7.",
        "beta = 9.",
        "Done.",
    ]
    assert len(primary.requests) == 4
    assert len(secondary.requests) == 3
    assert unused.requests == []
    # Claude Code got each backend's thinking whole, as that backend signed it.
    received = {b.get("signature") for b in _blocks(first, "assistant") if b["type"] == "thinking"}
    assert received == {PRIMARY_SIGNATURE, SECONDARY_SIGNATURE}
    # Each upstream got back only its own thinking, never the other's. (This Claude Code
    # sends no thinking back at all; test_failover_proxy.py sends some, as other clients do.)
    for request in secondary.requests:
        assert _signatures(request) <= {SECONDARY_SIGNATURE}
        assert request.json()["model"] == "backup-up"
    for request in primary.requests:
        assert _signatures(request) <= {PRIMARY_SIGNATURE}
    assert 'toolwire_proxy_failovers_total{backend="claude"} 3' in metrics
    assert 'toolwire_proxy_cooldowns_total{backend="claude"} 3' in metrics


def _keep(tmp: Path, primary: FakeServer, secondary: FakeServer) -> None:
    # What each upstream was sent, for a reader of a failure.
    for name, server in (("primary", primary), ("secondary", secondary)):
        bodies = [r.json() if r.body else None for r in server.requests]
        (tmp / f"{name}.json").write_text(json.dumps(bodies, indent=1), encoding="utf-8")

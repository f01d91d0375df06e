"""What the v2 wire does with each kind of ``session/update`` beyond the renderer's table.

``subagent_update`` is not sent to a v2 client (``toolwire.updates.v2.DROPPED``) because a
v2 client never has subagents on: it sees each child as the digest of its calls on the
parent's ``Task`` card, every line valid v2 and none on a session it was never told of.
An update of a kind that has no v2 form is logged, never dropped without a word.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import acp_check_v2
from tests.agent.support import answer, environment, project
from tests.agent.test_v2_wire import _send, _until
from toolwire.agent.protocol.handshake import subagents_cap
from toolwire.agent.protocol.v2 import V2Wire
from toolwire.testing import streams

INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "0"}}


def _v2_wire(capabilities: dict[str, Any] | None = None) -> tuple[V2Wire, list[bytes]]:
    written: list[bytes] = []
    wire = V2Wire(written.append)
    params = {**INIT, "capabilities": capabilities or {}}
    translated = wire.incoming(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    )
    assert translated is not None
    wire.outgoing({"jsonrpc": "2.0", "id": 0, "result": {}})
    return wire, written


def _update_line(kind: str) -> bytes:
    update = {"sessionUpdate": kind, "x": 1}
    note = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }
    return (json.dumps(note) + "\n").encode()


def test_a_v2_client_cannot_turn_subagents_on() -> None:
    wire = V2Wire(lambda _line: None)
    params = {**INIT, "capabilities": {"subagents": {}}}
    translated = wire.incoming(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    )
    assert translated is not None
    assert not subagents_cap(translated)


def test_an_update_with_no_v2_form_is_logged_not_dropped_unsaid(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire, written = _v2_wire()
    with caplog.at_level(logging.WARNING, logger="toolwire.agent"):
        assert wire.line(_update_line("mystery_update")) == b""
        note = json.loads(_update_line("another_mystery"))
        assert wire.outgoing(note) is None
    said = [r.getMessage() for r in caplog.records]
    assert any("'mystery_update' has no ACP v2 form" in m for m in said), said
    assert any("'another_mystery' has no ACP v2 form" in m for m in said), said
    assert written == []
    # An extension's kind is v2's to carry: it passes.
    assert json.loads(wire.line(_update_line("_toolwire/probe")))["params"]["update"] == {
        "sessionUpdate": "_toolwire/probe",
        "x": 1,
    }


def test_a_v2_client_sees_each_child_as_the_digest_on_its_task_card(tmp_path: Path) -> None:
    acp_check_v2.schema()  # skips first when the npm package (the v2 schema) is absent
    root = project(tmp_path)
    task = {"description": "look", "prompt": "Read app.py and say.", "subagent_type": "explore"}
    bodies = [
        streams.anthropic_sse(answer(("tool", "Task", task, "toolu_task")), message_id="p0"),
        streams.anthropic_sse(
            answer(("tool", "Read", {"file_path": "app.py"}, "toolu_read")), message_id="c0"
        ),
        streams.anthropic_sse(answer(("text", "Child read it.")), message_id="c1"),
        streams.anthropic_sse(answer(("text", "All done.")), message_id="p1"),
    ]
    cassette = streams.write_cassette(tmp_path / "task.jsonl", bodies)
    (tmp_path / "config.toml").write_text("[acp]\nv2 = true\n", encoding="utf-8")
    env = environment(tmp_path, TOOLWIRE_CONFIG=str(tmp_path / "config.toml"))
    args = ["acp", "--backend", f"replay:{cassette}", "--mode", "accept-edits"]
    agent = subprocess.Popen(
        [sys.executable, "-m", "toolwire", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert agent.stdin is not None
    assert agent.stdout is not None
    wire: list[tuple[str, dict[str, Any]]] = []
    try:
        init = {**INIT, "capabilities": {"subagents": {}}}
        _send(agent.stdin, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        new = {"cwd": str(root)}
        _send(agent.stdin, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new})
        _until(agent.stdout, agent.stdin, 1, wire)
        session = wire[-1][1]["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "look"}]}
        _send(
            agent.stdin, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
        )
        _until(agent.stdout, agent.stdin, 2, wire)
    finally:
        agent.stdin.close()
        agent.wait(timeout=30)
        agent.stdout.close()
    sent = [m for _, m in wire]
    acp_check_v2.check_wire(sent, {0: "initialize", 1: "session/new", 2: "session/prompt"})
    updates = [m["params"] for m in sent if m.get("method") == "session/update"]
    assert {p["sessionId"] for p in updates} == {session}  # no child session named
    card = json.dumps(
        [p["update"] for p in updates if p["update"].get("toolCallId") == "toolu_task"],
        ensure_ascii=False,
    )
    assert "✓ Read app.py" in card  # the child's call, as a digest line
    assert "Child read it." in card
    assert wire[-1][1]["result"]["messageId"]

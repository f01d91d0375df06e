"""``initialize`` answered before the SDK has loaded, and the same answer the SDK gives.

``toolwire acp`` writes the ``initialize`` answer from plain JSON while the SDK's models
import in a thread (``toolwire.agent.launch``); these tests hold that answer to what the
SDK path writes, check that the agent still takes in what the client said, and that any
other first message is answered by the SDK exactly as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION
from acp.connection import StreamDirection

from tests.agent.pair import AgentUnderTest
from tests.agent.support import _valid, environment
from toolwire.agent.protocol.handshake import PROTOCOL_VERSION as OURS
from toolwire.agent.protocol.handshake import early_answer, initialize_result


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


@pytest.mark.anyio
async def test_the_early_answer_is_what_the_sdk_path_answers(acp: AgentUnderTest) -> None:
    await acp.run.conn.initialize(protocol_version=PROTOCOL_VERSION)
    answers = [
        e.message
        for e in acp.run.wire
        if e.direction == StreamDirection.INCOMING and "result" in e.message
    ]
    assert len(answers) == 1
    assert answers[0]["result"] == initialize_result()
    assert OURS == PROTOCOL_VERSION
    _valid("InitializeResponse", initialize_result())


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1"}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": []},
        },
    ],
)
def test_only_a_plain_initialize_is_answered_early(message: dict[str, Any]) -> None:
    assert early_answer(message) is None


def _run_agent(tmp_path: Path, lines: list[dict[str, Any]], replies: int) -> list[dict[str, Any]]:
    """``python -m toolwire acp`` fed ``lines``; the first ``replies`` lines it writes."""
    log = tmp_path / "agent.log"
    with subprocess.Popen(
        [sys.executable, "-m", "toolwire", "acp", "--log-file", str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(tmp_path),
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(b"".join(_line(m) for m in lines))
        proc.stdin.flush()
        out = [json.loads(proc.stdout.readline()) for _ in range(replies)]
        proc.stdin.close()
        proc.wait(timeout=30)
    return out


@pytest.mark.e2e
@pytest.mark.slow
def test_the_agent_takes_in_an_initialize_it_answered_early(tmp_path: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientInfo": {"name": "Zed", "version": "1"}},
    }
    new = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": str(tmp_path), "mcpServers": []},
    }
    answers = _run_agent(tmp_path, [init, new], 2)
    assert answers[0] == {"jsonrpc": "2.0", "id": 0, "result": initialize_result()}
    assert answers[1]["id"] == 1
    assert isinstance(answers[1]["result"]["sessionId"], str)
    # The profile comes from clientInfo: the agent heard what the client said.
    assert "client Zed, profile" in (tmp_path / "agent.log").read_text(encoding="utf-8")


@pytest.mark.e2e
@pytest.mark.slow
def test_any_other_first_message_is_answered_by_the_sdk(tmp_path: Path) -> None:
    bad = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}
    init = {"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 1}}
    answers = _run_agent(tmp_path, [bad, init], 2)
    assert answers[0]["id"] == 7
    assert answers[0]["error"]["code"] == -32602
    assert answers[1] == {"jsonrpc": "2.0", "id": 8, "result": initialize_result()}

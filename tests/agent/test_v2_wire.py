"""ACP v2 on the wire without Node: a command's output in an agent-owned terminal.

A real ``toolwire acp`` process asked for protocol version 2; a command prints 200 KB in
4,000 flushed lines. Its bytes reach the client once, as ``terminal_output_chunk``s,
and the v2 lines about the command cost at most 1.4x the output (base64 is 4/3).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests import acp_check_v2
from tests.agent.support import answer, environment, project
from toolwire.testing import streams

LINES = 4000
SCRIPT = (
    "import sys\n"
    f"for i in range({LINES}):\n"
    "    sys.stdout.write('line %05d ' % i + 'x' * 40 + '\\n'); sys.stdout.flush()\n"
)


def _send(pipe: IO[str], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message) + "\n")
    pipe.flush()


def _until(
    pipe: IO[str], reply: IO[str], answer_id: int, into: list[tuple[str, dict[str, Any]]]
) -> None:
    """Read until the answer to ``answer_id``; allow the command when asked."""
    for line in pipe:
        message = json.loads(line)
        into.append((line, message))
        if message.get("method") == "session/request_permission":
            outcome = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            _send(reply, {"jsonrpc": "2.0", "id": message["id"], "result": outcome})
        if message.get("id") == answer_id and "method" not in message:
            return
    raise AssertionError("the agent ended before it answered")


def test_v2_command_output_is_sent_once_in_a_terminal(tmp_path: Path) -> None:
    acp_check_v2.schema()  # skips first when the npm package (the v2 schema) is absent
    root = project(tmp_path)
    (root / "loud.py").write_text(SCRIPT, encoding="utf-8")
    bash = {"command": f"{sys.executable} loud.py"}
    bodies = [
        streams.anthropic_sse(answer(("tool", "Bash", bash, "toolu_loud")), message_id="m0"),
        streams.anthropic_sse(answer(("text", "Printed.")), message_id="m1"),
    ]
    cassette = streams.write_cassette(tmp_path / "loud.jsonl", bodies)
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
        info = {"name": "raw", "version": "0"}
        init = {"protocolVersion": 2, "info": info, "capabilities": {}}
        _send(agent.stdin, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        _send(
            agent.stdin,
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(root)}},
        )
        _until(agent.stdout, agent.stdin, 1, wire)
        session = wire[-1][1]["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "print"}]}
        _send(
            agent.stdin, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
        )
        _until(agent.stdout, agent.stdin, 2, wire)
    finally:
        agent.stdin.close()
        agent.wait(timeout=30)
        agent.stdout.close()
    asked = {0: "initialize", 1: "session/new", 2: "session/prompt"}
    acp_check_v2.check_wire([m for _, m in wire], asked)

    expected = b"".join(b"line %05d " % i + b"x" * 40 + b"\n" for i in range(LINES))
    updates = [
        (line, m["params"]["update"]) for line, m in wire if m.get("method") == "session/update"
    ]
    terminal = [u for _, u in updates if u.get("terminalId") == "toolu_loud-term"]
    assert terminal[0]["sessionUpdate"] == "terminal_update"
    assert terminal[0]["command"] == bash["command"]
    assert terminal[-1]["exitStatus"] == {"exitCode": 0}
    chunks = [u["data"] for u in terminal if u["sessionUpdate"] == "terminal_output_chunk"]
    assert b"".join(base64.b64decode(c) for c in chunks) == expected  # each byte once
    # The card shows the terminal, and never the output itself.
    card = [u for _, u in updates if u.get("toolCallId") == "toolu_loud"]
    shown = [u["content"] for u in card if u["sessionUpdate"] == "tool_call_content_chunk"]
    assert shown == [{"type": "terminal", "terminalId": "toolu_loud-term"}]
    assert all("line 0" not in json.dumps(u) for u in card)
    about = sum(
        len(line.encode())
        for line, u in updates
        if u.get("terminalId") == "toolu_loud-term" or u.get("toolCallId") == "toolu_loud"
    )
    ratio = about / len(expected)
    print(f"v2 command bytes {about} for {len(expected)} output bytes: {ratio:.3f}x")
    assert ratio <= 1.4

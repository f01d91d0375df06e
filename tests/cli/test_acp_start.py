"""``toolwire acp`` reads its first line before asyncio, the SDK or the configuration load.

A real ``toolwire acp`` process, driven byte by byte: what the client sent with or after
its ``initialize`` is read on as it would have been, and a bad configuration is one line
on stderr at once, before the client speaks (exit 2 at the end of input; what the editor
sees: ``tests/agent/test_bad_config.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.agent.support import environment

TOOLWIRE = str(Path(sys.executable).parent / "toolwire")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


def _line(message: dict[str, object]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _spawn(tmp_path: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [TOOLWIRE, "acp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(tmp_path),
    )


def test_a_bad_configuration_is_said_on_stderr_before_the_client_speaks(tmp_path: Path) -> None:
    agent = _spawn(tmp_path, "--mode", "nonsense")
    out, err = agent.communicate(timeout=30)  # stdin stays open until it has exited
    assert agent.returncode == 2
    assert out == b""
    assert err.decode().startswith("toolwire: mode 'nonsense' (from --mode) is not valid")


def test_what_follows_initialize_in_the_same_write_is_read_on(tmp_path: Path) -> None:
    agent = _spawn(tmp_path)
    assert agent.stdin is not None
    assert agent.stdout is not None
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new"}
    new["params"] = {"cwd": str(tmp_path), "mcpServers": []}
    agent.stdin.write(_line(INITIALIZE) + _line(new) + b"not json\n")
    agent.stdin.flush()
    first = json.loads(agent.stdout.readline())
    # The bad line is answered as it is read; session/new once the session exists.
    later = {a["id"]: a for a in (json.loads(agent.stdout.readline()) for _ in range(2))}
    agent.communicate(timeout=30)
    assert first["id"] == 0
    assert first["result"]["protocolVersion"] == 1
    assert later[1]["result"]["sessionId"]
    assert later[None]["error"]["code"] == -32700


def test_an_initialize_that_arrives_in_pieces_is_answered_once(tmp_path: Path) -> None:
    agent = _spawn(tmp_path)
    assert agent.stdin is not None
    assert agent.stdout is not None
    line = _line(INITIALIZE)
    for piece in (line[:9], line[9:40], line[40:]):
        agent.stdin.write(piece)
        agent.stdin.flush()
        time.sleep(0.05)
    answer = json.loads(agent.stdout.readline())
    rest, _ = agent.communicate(timeout=30)
    assert answer["id"] == 0
    assert answer["result"]["agentInfo"]["name"] == "toolwire"
    assert rest == b""


def test_an_input_of_dev_null_ends_the_agent_at_once(tmp_path: Path) -> None:
    # epoll cannot wait on /dev/null: the agent must read it as the empty input it is
    # (a harness that starts it with no input), not wait for ever for a line.
    with open(os.devnull, "rb") as nothing:
        done = subprocess.run(
            [TOOLWIRE, "acp"],
            stdin=nothing,
            capture_output=True,
            env=environment(tmp_path),
            timeout=30,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr

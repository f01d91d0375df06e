"""The protocol loop never dies on one message: a malformed one is answered, serving goes on.

The transport runs under the official SDK's ``Connection`` as ``toolwire acp`` runs it
(``tests.agent.test_framing`` does the same for bad framing); here the messages are
well-formed JSON-RPC whose params are what is wrong, on a v2 connection too. Then the
real process: an ``initialize`` asking for a version toolwire does not speak is answered
with the highest one it does, and the session that follows is served.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.connection import Connection

from tests.agent.support import environment
from tests.agent.test_framing import Collect
from toolwire.agent.protocol.transport import StdioTransport

SENTINEL = {"jsonrpc": "2.0", "id": "sentinel", "method": "session/list", "params": {}}
V2_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "t", "version": "0"}, "capabilities": {}},
}


async def _serve(messages: list[dict[str, Any]], *, v2: bool) -> list[dict[str, Any]]:
    """``messages`` then the sentinel; what was written once the sentinel is answered (the
    receive loop must still be running then)."""
    reader = asyncio.StreamReader()
    writer = Collect()

    async def handler(method: str, params: Any, notification: bool) -> Any:
        return None if notification else {}

    transport = StdioTransport(reader, writer)
    if v2:
        transport.serve_v2()
    conn = Connection(handler, transport, listening=False)
    listening = asyncio.create_task(conn.main_loop())
    for message in [*messages, SENTINEL]:
        reader.feed_data(json.dumps(message).encode() + b"\n")
    seen = asyncio.create_task(writer.seen.wait())
    await asyncio.wait({seen, listening}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
    alive = not listening.done()
    reader.feed_eof()
    seen.cancel()
    await asyncio.gather(listening, seen, return_exceptions=True)
    await conn.close()
    assert writer.seen.is_set(), "the sentinel was not answered: the receive loop died"
    assert alive
    return writer.lines


@pytest.mark.parametrize(
    "params",
    [
        {"sessionId": "s1", "prompt": "hello"},  # a string, not a list of blocks
        {"sessionId": "s1", "prompt": ["a", 1]},
        {"sessionId": "s1", "prompt": {"type": "text"}},
    ],
)
def test_a_v2_prompt_with_bad_params_is_refused_and_serving_goes_on(
    params: dict[str, Any],
) -> None:
    prompt = {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": params}
    lines = asyncio.run(_serve([V2_INIT, prompt], v2=True))
    answers = {m["id"]: m for m in lines if "method" not in m}
    assert answers[5]["error"]["code"] == -32602
    assert "result" in answers["sentinel"]


def _agent(
    tmp_path: Path, lines: list[dict[str, Any]], replies: int, *, v2: bool = True
) -> list[dict[str, Any]]:
    """``python -m toolwire acp`` (``[acp] v2`` as given) fed ``lines``; its first
    ``replies`` answers (not notifications)."""
    config = tmp_path / "config.toml"
    config.write_text(f"[acp]\nv2 = {str(v2).lower()}\n", encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-m", "toolwire", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(tmp_path, TOOLWIRE_CONFIG=str(config)),
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
        proc.stdin.flush()
        out: list[dict[str, Any]] = []
        while len(out) < replies:
            line = proc.stdout.readline()
            assert line, f"the agent stopped after {out}"
            message = json.loads(line)
            if "method" not in message:
                out.append(message)
        proc.stdin.close()
        proc.wait(timeout=30)
    return out


@pytest.mark.e2e
@pytest.mark.parametrize(("version", "v2", "highest"), [(-1, True, 2), (0, False, 1)])
def test_an_unspoken_version_gets_the_highest_spoken_and_service_goes_on(
    tmp_path: Path, version: int, v2: bool, highest: int
) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    init["params"] = {"protocolVersion": version}
    new = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": str(tmp_path), "mcpServers": []},
    }
    answers = _agent(tmp_path, [init, new], 2, v2=v2)
    assert answers[0]["result"]["protocolVersion"] == highest
    assert isinstance(answers[1]["result"]["sessionId"], str)

"""The agent's requests to an Anthropic server carry prompt-cache breakpoints.

A turn with two Read calls makes three requests. Each marks the last tool, the system
prompt and its two latest user messages; each starts with the bytes of the one before
(its breakpoints aside), so the server reads the previous request's prefix back. With
``prompt_cache = false`` the requests carry none.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    environment,
    fake_backend,
    project,
    response,
    start,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply

EPHEMERAL = {"type": "ephemeral"}
_MARK = ',"cache_control":{"type":"ephemeral"}'


def _turn(tmp_path: Path, extra: str = "") -> list[Received]:
    """One prompt answered with two Read calls and a closing text; the requests sent."""
    root = project(tmp_path)
    (root / "b.py").write_text("B = 2\n", encoding="utf-8")
    replies = [
        response(("text", "Reading."), ("tool", "Read", {"file_path": "app.py"}, "toolu_1")),
        response(("tool", "Read", {"file_path": "b.py"}, "toolu_2"), n=1),
        response(("text", "Both read."), n=2),
    ]
    with FakeServer() as server:
        server.script(*(Reply(chunks=[r.encode()]) for r in replies))
        config = write_config(tmp_path, fake_backend(server.url) + extra)
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                result = await run.conn.prompt(session_id=sid, prompt=[text_block("Read both")])
                assert result.stop_reason == "end_turn"

        asyncio.run(scenario())
    assert len(server.requests) == 3
    return server.requests


def _marked_messages(body: dict[str, Any]) -> list[tuple[int, int]]:
    return [
        (m, b)
        for m, message in enumerate(body["messages"])
        for b, block in enumerate(message["content"])
        if "cache_control" in block
    ]


def _history_bytes(raw: str, body: dict[str, Any]) -> str:
    """The request's bytes up to the end of its last message (breakpoints left out)."""
    messages = json.dumps(body["messages"], ensure_ascii=False, separators=(",", ":"))
    end = raw.index('"messages":[') + len('"messages":') + len(messages) - 1
    assert raw[end] == "]"
    return raw[:end].replace(_MARK, "")


def test_each_request_marks_tools_system_and_the_latest_messages(tmp_path: Path) -> None:
    sent = _turn(tmp_path)
    bodies = [r.json() for r in sent]
    for body in bodies:
        assert body["tools"][-1]["cache_control"] == EPHEMERAL
        assert all("cache_control" not in t for t in body["tools"][:-1])
        (system,) = body["system"]
        assert system["type"] == "text"
        assert system["text"].startswith("You are toolwire")
        assert system["cache_control"] == EPHEMERAL
        assert body["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
        assert body["messages"][-1]["role"] == "user"
        assert json.dumps(body).count('"cache_control"') <= 4
    assert [_marked_messages(b) for b in bodies] == [[(0, 0)], [(0, 0), (2, 0)], [(2, 0), (4, 0)]]
    assert bodies[2]["messages"][4]["content"][0]["type"] == "tool_result"
    # Each request starts with the previous one's bytes, up to its newest message.
    for earlier, later in itertools.pairwise(sent):
        before = _history_bytes(earlier.body.decode(), earlier.json())
        after = later.body.decode().replace(_MARK, "")
        assert after.startswith(before + ",")
    # The newest message of one request is sent again, breakpoint and all, by the next.
    assert bodies[2]["messages"][2] == bodies[1]["messages"][2]


def test_prompt_cache_off_sends_no_breakpoints(tmp_path: Path) -> None:
    sent = _turn(tmp_path, "prompt_cache = false\n")
    for request in sent:
        assert b"cache_control" not in request.body
        assert isinstance(request.json()["system"], str)

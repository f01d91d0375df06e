"""``toolwire proxy`` rescues calls an OpenAI-compatible upstream leaked as text, for its
Anthropic-dialect clients (docs/decoding.md, "Rescue"): the leaky server of
``tests/fakes/leaky.py`` answers a Read -> Edit -> Bash task, and the client gets real
``tool_use`` blocks, never the markup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

from tests.fakes.http import FakeServer
from tests.fakes.leaky import DONE, EDIT, leaky
from tests.proxy.support import (
    decode_anthropic,
    request_body,
    running,
    settings_for,
    sse_payloads,
)
from toolwire.events import MessageEnd, TextDelta, ThinkingDelta, ToolCallEnd, ToolCallStart

TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {"type": "object", "properties": {k: {"type": "string"} for k in keys}},
    }
    for name, keys in (
        ("Read", ["file_path"]),
        ("Edit", ["file_path", "old_string", "new_string"]),
        ("Bash", ["command"]),
    )
]


def _turn(url: str, history: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bytes]:
    """One streamed request; the assistant's content blocks as the client keeps them."""
    body = request_body(history, stream=True, tools=TOOLS)
    reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    events = decode_anthropic(reply.content)
    blocks: list[dict[str, Any]] = []
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    if text:
        blocks.append({"type": "text", "text": text})
    names = {e.id: e.name for e in events if isinstance(e, ToolCallStart)}
    for end in (e for e in events if isinstance(e, ToolCallEnd)):
        blocks.append(
            {"type": "tool_use", "id": end.id, "name": names[end.id], "input": end.arguments}
        )
    stop = next(e for e in events if isinstance(e, MessageEnd)).stop_reason
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    return [*blocks, {"stop": stop, "thinking": thinking}], reply.content


def test_a_leaking_upstream_gives_the_client_real_tool_use_blocks(tmp_path: Path) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Say hello"}]
    turns = []
    with (
        FakeServer(leaky) as upstream,
        running(settings_for(tmp_path, upstream.url, upstream.url)) as url,
    ):
        for _ in range(5):
            (*blocks, meta), raw = _turn(url, history)
            turns.append((blocks, meta, raw))
            if meta["stop"] != "tool_use":
                break
            history.append({"role": "assistant", "content": blocks})
            results = [
                {"type": "tool_result", "tool_use_id": b["id"], "content": "ok"}
                for b in blocks
                if b["type"] == "tool_use"
            ]
            history.append({"role": "user", "content": results})
    calls = [
        (b["name"], b["input"]) for blocks, _, _ in turns for b in blocks if b["type"] == "tool_use"
    ]
    assert calls == [
        ("Read", {"file_path": "app.py"}),
        ("Edit", EDIT),
        ("Bash", {"command": "cat app.py"}),
    ]
    assert [meta["stop"] for _, meta, _ in turns] == ["tool_use"] * 3 + ["end_turn"]
    assert turns[-1][0] == [{"type": "text", "text": DONE}]
    assert "friendlier greeting" in turns[1][1]["thinking"]
    for _, _meta, raw in turns:
        assert b"<function=" not in raw
        assert b"tool_call>" not in raw
        assert b"parameters" not in raw
    starts = [p for p in sse_payloads(turns[0][2]) if p["type"] == "content_block_start"]
    assert [s["content_block"]["type"] for s in starts] == ["text", "tool_use"]

"""Each provider's thinking parameters in the agent's request, and its thought streamed
as ``agent_thought_chunk`` (fake servers speaking each wire format)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    check_wire,
    environment,
    project,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply


def _sse(*payloads: dict[str, Any], named: bool = False, done: bool = False) -> bytes:
    lines = []
    for payload in payloads:
        head = f"event: {payload['type']}\n" if named else ""
        lines.append(f"{head}data: {json.dumps(payload)}\n\n")
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def _chat() -> bytes:
    return _sse(
        {"choices": [{"index": 0, "delta": {"reasoning_content": "Weighing it."}}]},
        {"choices": [{"index": 0, "delta": {"content": "Answer."}, "finish_reason": "stop"}]},
        done=True,
    )


def _responses() -> bytes:
    summary = {"item_id": "rs_1", "output_index": 0, "summary_index": 0}
    return _sse(
        {"type": "response.reasoning_summary_text.delta", **summary, "delta": "Weighing it."},
        {"type": "response.output_text.delta", "item_id": "m_1", "output_index": 1,
         "content_index": 0, "delta": "Answer."},
        {"type": "response.completed", "response": {"status": "completed", "output": []}},
        named=True,
    )  # fmt: skip


def _gemini() -> bytes:
    def chunk(part: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, **extra}]}

    return _sse(
        chunk({"text": "Weighing it.", "thought": True}),
        chunk({"text": "Answer."}, finishReason="STOP"),
    )


CASES: dict[str, tuple[Callable[[], bytes], Callable[[dict[str, Any]], bool]]] = {
    "openai-chat": (_chat, lambda b: b["reasoning_effort"] == "medium"),
    "openai-responses": (
        _responses,
        lambda b: (
            b["reasoning"] == {"effort": "medium", "summary": "auto"}
            and b["include"] == ["reasoning.encrypted_content"]
        ),
    ),
    "gemini": (
        _gemini,
        lambda b: (
            b["generationConfig"]["thinkingConfig"]
            == {"thinkingBudget": 8192, "includeThoughts": True}
        ),
    ),
}


@pytest.mark.parametrize("provider", list(CASES))
def test_thinking_per_provider(tmp_path: Path, provider: str) -> None:
    body, sent_ok = CASES[provider]
    root = project(tmp_path)
    with FakeServer() as server:
        server.script(Reply(chunks=[body()]))
        config = write_config(
            tmp_path,
            f'default_backend = "x"\n[backends.x]\nprovider = "{provider}"\nmodel = "m-test"\n'
            f'base_url = "{server.url}"\napi_key_env = "TEST_KEY"\nthought_level = "medium"\n',
        )
        env = environment(tmp_path, TEST_KEY=KEY)

        async def scenario() -> None:
            async with agent(tmp_path, ScriptedClient(), "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                result = await run.conn.prompt(session_id=sid, prompt=[text_block("hi")])
                assert result.stop_reason == "end_turn"
                check_wire(run.wire)
                notes = run.notifications()
                assert text_of(notes, "agent_thought_chunk") == "Weighing it."
                assert text_of(notes) == "Answer."

        asyncio.run(scenario())
    (request,) = server.requests
    assert sent_ok(request.json())

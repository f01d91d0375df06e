"""``POST /v1/responses`` through the proxy, read by the official ``openai`` SDK, over an
Anthropic-family and an OpenAI-family upstream; ``previous_response_id`` continued by a
second proxy sharing the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.dialect_support import (
    CALLS,
    MODELS,
    calls_reply,
    error_reply,
    proxy,
    text_reply,
    upstream_messages,
)
from tests.proxy.dialect_support import openai_client as _client
from toolwire.proxy.stores import SQLiteStore

FAMILIES = ["anthropic", "openai"]
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "Read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        "strict": False,
    }
]
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"


def _calls(output: list[Any]) -> list[tuple[str, str, Any]]:
    return [
        (o.call_id, o.name, json.loads(o.arguments)) for o in output if o.type == "function_call"
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_streamed_text_answer(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(text_reply(family, "Hello there."))
    client = _client(base_url)
    with client.responses.stream(
        model=MODELS[family], input="hi", instructions="Be brief."
    ) as stream:
        kinds = [e.type for e in stream]
        final = stream.get_final_response()
    assert final.output_text == "Hello there."
    assert final.status == "completed"
    assert final.usage is not None
    assert final.usage.input_tokens > 0
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    for kind in (
        "output_item.added",
        "content_part.added",
        "output_text.delta",
        "output_text.done",
    ):
        assert f"response.{kind}" in kinds
    sent = upstream.requests[0].json()
    assert "Be brief." in json.dumps(sent)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_text_answer_not_streamed(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(text_reply(family, "Hello there."))
    response = _client(base_url).responses.create(model=MODELS[family], input="hi")
    assert response.object == "response"
    assert response.output_text == "Hello there."
    assert response.usage is not None


@pytest.mark.parametrize("family", FAMILIES)
def test_parallel_function_calls_streamed(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(calls_reply(family))
    client = _client(base_url)
    with client.responses.stream(
        model=MODELS[family], input="Read both", tools=TOOLS, parallel_tool_calls=True
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert _calls(final.output) == CALLS
    # A call starts early: its item, named, is added before any of its arguments.
    added = [e for e in events if e.type == "response.output_item.added"]
    first_args = next(
        n for n, e in enumerate(events) if e.type.startswith("response.function_call_arguments")
    )
    assert events.index(added[0]) < first_args
    assert added[0].item.type == "function_call"
    assert added[0].item.name == "Read"


@pytest.mark.parametrize("family", FAMILIES)
def test_parallel_function_calls_not_streamed(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(calls_reply(family))
    response = _client(base_url).responses.create(
        model=MODELS[family], input="Read both", tools=TOOLS
    )
    assert _calls(response.output) == CALLS


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("streamed", [True, False])
def test_an_upstream_error_in_openai_shape(
    family: str, streamed: bool, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(error_reply(family))
    with pytest.raises(openai.BadRequestError) as caught:
        _client(base_url).responses.create(model=MODELS[family], input="hi", stream=streamed)
    assert "bad input" in caught.value.message
    assert caught.value.type == "invalid_request_error"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_freeform_tool_goes_as_a_function_and_comes_back_as_custom(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(calls_reply(family, [("call_p", "apply_patch", {"input": PATCH})]))
    tool: Any = {"type": "custom", "name": "apply_patch", "description": "Edit files."}
    client = _client(base_url)
    with client.responses.stream(model=MODELS[family], input="add a.txt", tools=[tool]) as stream:
        final = stream.get_final_response()
    (call,) = final.output
    assert call.type == "custom_tool_call"
    assert (call.call_id, call.name, call.input) == ("call_p", "apply_patch", PATCH)
    offered = json.dumps(upstream.requests[0].json()["tools"])
    assert "apply_patch" in offered
    assert '"input"' in offered


@pytest.mark.parametrize("family", FAMILIES)
def test_call_items_and_outputs_reach_the_upstream(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, "Done."))
    items: list[Any] = [
        {"role": "user", "content": [{"type": "input_text", "text": "Read a.py, patch b"}]},
        {"type": "function_call", "call_id": "call_9", "name": "Read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_9", "output": "print(1)"},
        {"type": "custom_tool_call", "call_id": "call_8", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_8", "output": "patched"},
    ]
    tools = [*TOOLS, {"type": "custom", "name": "apply_patch"}]
    response = _client(base_url).responses.create(model=MODELS[family], input=items, tools=tools)
    assert response.output_text == "Done."
    sent = upstream_messages(upstream.requests[0].json())
    for text in ("call_9", "print(1)", "call_8", "patched", "Add File"):
        assert text in sent


def test_previous_response_id_continues_on_another_replica(
    tmp_path: Path, upstream: FakeServer
) -> None:
    """Two proxies on one SQLite store: the second continues the first's answer."""
    path = tmp_path / "sessions.db"
    upstream.script(text_reply("openai", "First answer."), text_reply("openai", "Second."))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with proxy(tmp_path / "a", upstream, store=SQLiteStore(path)) as one:
        first = _client(one).responses.create(model="local,qwen3", input="First question")
    with proxy(tmp_path / "b", upstream, store=SQLiteStore(path)) as two:
        client = _client(two)
        second = client.responses.create(
            model="local,qwen3", input="Second question", previous_response_id=first.id
        )
        with pytest.raises(openai.NotFoundError) as missing:
            client.responses.create(model="local,qwen3", input="x", previous_response_id="resp_no")
    assert second.output_text == "Second."
    sent = upstream_messages(upstream.requests[1].json())
    assert sent.index("First question") < sent.index("First answer.")
    assert sent.index("First answer.") < sent.index("Second question")
    assert missing.value.code == "previous_response_not_found"


def test_store_false_keeps_nothing(base_url: str, upstream: FakeServer) -> None:
    upstream.script(text_reply("openai", "Forgotten."))
    client = _client(base_url)
    first = client.responses.create(model="local,qwen3", input="hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="local,qwen3", input="x", previous_response_id=first.id)


def test_a_codex_shaped_request_streams_the_events_codex_reads(
    upstream: FakeServer, base_url: str
) -> None:
    """What Codex CLI sends (``store`` off, ``prompt_cache_key``, a developer message,
    ``shell`` and the freeform ``apply_patch``) and the event order it reads back."""
    upstream.script(calls_reply("openai", [("call_p", "apply_patch", {"input": PATCH})]))
    shell = {"type": "function", "name": "shell", "parameters": {"type": "object"}}
    body = {
        "model": MODELS["openai"],
        "instructions": "You are Codex.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "sandbox"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "add a.txt"}],
            },
        ],
        "tools": [shell, {"type": "custom", "name": "apply_patch", "description": "Patch."}],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "codex-conv-1",
        "text": {"verbosity": "low"},
    }
    reply = httpx2.post(f"{base_url}/responses", json=body, timeout=10)
    assert reply.headers["x-toolwire-session"] == "codex-conv-1"
    kinds = [line[7:] for line in reply.text.splitlines() if line.startswith("event: ")]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    sent = upstream.requests[0].json()
    assert sent["messages"][0]["role"] == "system"
    assert "You are Codex." in sent["messages"][0]["content"]
    assert "sandbox" in sent["messages"][0]["content"]

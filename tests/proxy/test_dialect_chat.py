"""``POST /v1/chat/completions`` through the proxy, read by the official ``openai`` SDK,
over an Anthropic-family and an OpenAI-family upstream."""

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
    TOOLS,
    calls_reply,
    error_reply,
    proxy,
    text_reply,
    upstream_messages,
)
from tests.proxy.dialect_support import openai_client as _client

FAMILIES = ["anthropic", "openai"]
PNG = "iVBORw0KGgo="


def _ask(prompt: str = "Read both files") -> list[Any]:
    return [{"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_streamed_text_answer_with_usage(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, "Hello there."))
    stream = _client(base_url).chat.completions.create(
        model=MODELS[family],
        messages=_ask("hi"),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello there."
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens > 0
    sent = upstream.requests[0].json()
    assert "Be brief." in json.dumps(sent)
    assert "hi" in upstream_messages(sent)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_text_answer_not_streamed(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(text_reply(family, "Hello there."))
    completion = _client(base_url).chat.completions.create(model=MODELS[family], messages=_ask())
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == "Hello there."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.total_tokens > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_parallel_tool_calls_streamed(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(calls_reply(family))
    client = _client(base_url)
    with client.chat.completions.stream(
        model=MODELS[family],
        messages=_ask(),
        tools=TOOLS,  # type: ignore[arg-type]
    ) as stream:
        chunks = [e.chunk for e in stream if e.type == "chunk"]
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls or []
    got = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls]
    assert got == CALLS
    assert final.choices[0].finish_reason == "tool_calls"
    # A call starts early: the chunk that names it carries no arguments yet.
    named = [
        d
        for c in chunks
        for d in (c.choices[0].delta.tool_calls or [] if c.choices else [])
        if d.function and d.function.name
    ]
    assert [d.id for d in named] == ["call_1", "call_2"]
    assert all(not d.function.arguments for d in named if d.function)
    offered = upstream.requests[0].json()["tools"]
    assert "Read" in json.dumps(offered)


@pytest.mark.parametrize("family", FAMILIES)
def test_parallel_tool_calls_not_streamed(family: str, upstream: FakeServer, base_url: str) -> None:
    upstream.script(calls_reply(family))
    completion = _client(base_url).chat.completions.create(
        model=MODELS[family],
        messages=_ask(),
        tools=TOOLS,  # type: ignore[arg-type]
    )
    calls = completion.choices[0].message.tool_calls or []
    got = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls]  # type: ignore[union-attr]
    assert got == CALLS
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("streamed", [True, False])
def test_an_upstream_error_in_openai_shape(
    family: str, streamed: bool, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(error_reply(family))
    with pytest.raises(openai.BadRequestError) as caught:
        _client(base_url).chat.completions.create(
            model=MODELS[family], messages=_ask(), stream=streamed
        )
    assert "bad input" in caught.value.message
    assert caught.value.type == "invalid_request_error"
    assert isinstance(caught.value.body, dict)
    assert "param" in caught.value.body


def test_a_malformed_request_names_the_field(base_url: str) -> None:
    reply = httpx2.post(f"{base_url}/chat/completions", json={"model": "m", "messages": []})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "messages"
    assert error["type"] == "invalid_request_error"
    assert set(error) == {"message", "type", "code", "param"}


@pytest.mark.parametrize("family", FAMILIES)
def test_a_tool_loop_and_an_image_reach_the_upstream(
    family: str, upstream: FakeServer, base_url: str
) -> None:
    upstream.script(text_reply(family, "Done."))
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "Read", "arguments": '{"file_path": "a.py"}'},
    }
    image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_9", "content": "print(1)"},
    ]
    completion = _client(base_url).chat.completions.create(
        model=MODELS[family],
        messages=messages,
        tools=TOOLS,  # type: ignore[arg-type]
    )
    assert completion.choices[0].message.content == "Done."
    sent = upstream_messages(upstream.requests[0].json())
    assert "call_9" in sent
    assert "print(1)" in sent
    assert PNG in sent


def test_the_models_listing_is_openais_too(base_url: str) -> None:
    models = _client(base_url).models.list()
    ids = [m.id for m in models]
    assert "claude,claude-up" in ids
    assert "local,qwen3" in ids
    assert all(m.object == "model" and m.owned_by for m in models)


def test_the_key_goes_as_a_bearer_token(tmp_path: Path, upstream: FakeServer) -> None:
    upstream.script(text_reply("openai", "ok"))
    with proxy(tmp_path, upstream, 'token = "team-secret"') as url:
        with pytest.raises(openai.AuthenticationError) as caught:
            _client(url).chat.completions.create(model="local,qwen3", messages=_ask())
        assert caught.value.code == "invalid_api_key"
        good = _client(url, "team-secret")
        answer = good.chat.completions.create(model="local,qwen3", messages=_ask())
    assert answer.choices[0].message.content == "ok"


def test_arguments_nested_past_the_parser_are_one_clear_refusal(base_url: str) -> None:
    # JSON text inside the body, nested deeper than json.loads goes: 400, never a 500.
    deep = "[" * 100_000 + "]" * 100_000
    call = {"id": "c", "type": "function", "function": {"name": "Read", "arguments": deep}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
    ]
    reply = httpx2.post(f"{base_url}/chat/completions", json={"model": "m", "messages": messages})
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request_error"

"""Each backend against a local fake server speaking its provider's streaming format."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.backends.support import (
    FAST,
    KEY,
    REQUEST,
    anthropic_body,
    collect,
    find,
    jsonl_as_sse,
)
from tests.fakes.http import FakeServer, Reply, pieces, sse
from tests.helpers import RECORDED, needs_shared, read_stream
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.gemini import GeminiBackend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.openai_chat import OpenAIChatBackend
from toolwire.backends.openai_responses import OpenAIResponsesBackend
from toolwire.errors import HTTPStatusError, TransportError, TransportTimeoutError
from toolwire.events import (
    MessageEnd,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def _anthropic(server: FakeServer, **kw: Any) -> AnthropicBackend:
    return AnthropicBackend(
        name="claude",
        model="claude-x",
        api_key=KEY,
        api_key_env="ANTHROPIC_API_KEY",
        base_url=server.url,
        settings=kw.pop("settings", FAST),
        **kw,
    )


# -- a streamed tool call, end to end, per provider ------------------------------------


@needs_shared
def test_anthropic_streams_a_tool_call(server: FakeServer) -> None:
    server.script(Reply(chunks=pieces(anthropic_body(), 37)))
    events = collect(_anthropic(server).stream(REQUEST))
    start = find(events, ToolCallStart)[0]
    assert (start.name, start.id) == ("get_weather", "toolu_01NRLabsLyVHZPKxbKvkfSMn")
    assert find(events, ToolCallEnd)[0].arguments == {"location": "Paris"}
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "tool_use"
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.json()["model"] == "claude-x"
    assert request.json()["stream"] is True


@needs_shared
def test_openai_chat_streams_parallel_tool_calls(server: FakeServer) -> None:
    body = read_stream(RECORDED / "openai_chat_parallel_tool_calls.sse")
    server.script(Reply(chunks=pieces(body, 101)))
    backend = OpenAIChatBackend(
        name="oa", model="gpt-x", api_key=KEY, base_url=server.url + "/v1", settings=FAST
    )
    events = collect(backend.stream(REQUEST))
    assert [s.name for s in find(events, ToolCallStart)] == ["GetWeatherArgs", "get_stock_price"]
    assert all(e.ok for e in find(events, ToolCallEnd))
    end = events[-1]
    assert isinstance(end, MessageEnd)
    assert end.stop_reason == "tool_use"
    assert end.usage is not None
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json()["stream_options"] == {"include_usage": True}


@needs_shared
def test_openai_responses_streams_a_function_call(server: FakeServer) -> None:
    body = jsonl_as_sse("openai_responses_function_call.jsonl", named=True)
    server.script(Reply(chunks=pieces(body, 64)))
    backend = OpenAIResponsesBackend(
        name="oa", model="gpt-x", api_key=KEY, base_url=server.url + "/v1", settings=FAST
    )
    events = collect(backend.stream(REQUEST))
    assert len(find(events, ToolCallStart)) == 1
    assert find(events, ToolCallEnd)[0].ok
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "tool_use"
    assert server.requests[0].path == "/v1/responses"
    assert server.requests[0].json()["input"][0]["role"] == "user"


@needs_shared
def test_gemini_streams_a_function_call_with_its_signature(server: FakeServer) -> None:
    body = jsonl_as_sse("gemini_function_call.jsonl", named=False)
    server.script(Reply(chunks=pieces(body, 50)))
    backend = GeminiBackend(
        name="gem", model="gemini-x", api_key=KEY, base_url=server.url, settings=FAST
    )
    events = collect(backend.stream(REQUEST))
    start = find(events, ToolCallStart)[0]
    assert start.name == "weather"
    assert start.signature
    assert find(events, ToolCallEnd)[0].arguments == {"location": "San Francisco"}
    (request,) = server.requests
    assert request.path == "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == KEY
    assert KEY not in request.path


def test_text_format_backend_turns_markup_into_tool_calls(server: FakeServer) -> None:
    text = [
        'I will read it. <tool_call>\n{"name": "Read", "argu',
        'ments": {"file_path": "a.py"}}\n</tool_call>',
    ]
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]} for t in text
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    server.script(Reply(chunks=[sse([(None, c)]) for c in chunks] + [b"data: [DONE]\n\n"]))
    backend = OpenAIChatBackend(
        name="local", model="qwen", base_url=server.url, tool_format="hermes", settings=FAST
    )
    events = collect(backend.stream(REQUEST))
    assert "".join(e.text for e in find(events, TextDelta)).strip() == "I will read it."
    assert find(events, ToolCallStart)[0].name == "Read"
    assert find(events, ToolCallEnd)[0].arguments == {"file_path": "a.py"}
    assert events[-1] == MessageEnd("tool_use")
    request = server.requests[0]
    assert "authorization" not in request.headers  # a local server: no key configured
    assert "tools" not in request.json()
    assert "<tool_call>" in request.json()["messages"][0]["content"]


# -- retries ---------------------------------------------------------------------------

_ANTHROPIC_OVERLOADED = (
    b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
)


@needs_shared
def test_retries_429_529_503_before_the_first_byte(server: FakeServer) -> None:
    server.script(
        Reply(429, [b'{"error":{"message":"slow down"}}'], content_type="application/json"),
        Reply(529, [_ANTHROPIC_OVERLOADED], content_type="application/json"),
        Reply(503, [b"upstream unavailable"], content_type="text/plain"),
        Reply(chunks=[anthropic_body()]),
    )
    events = collect(_anthropic(server).stream(REQUEST))
    assert len(server.requests) == 4
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "tool_use"


def test_gives_up_after_max_retries_with_the_providers_message(server: FakeServer) -> None:
    server.script(*[Reply(529, [_ANTHROPIC_OVERLOADED]) for _ in range(4)])
    with pytest.raises(HTTPStatusError, match="HTTP 529: Overloaded") as info:
        collect(_anthropic(server).stream(REQUEST))
    assert info.value.status == 529
    assert len(server.requests) == 4  # one try and three retries


@needs_shared
def test_retry_after_is_honoured(server: FakeServer) -> None:
    server.script(
        Reply(429, [b"{}"], headers={"retry-after": "0.4"}), Reply(chunks=[anthropic_body()])
    )
    began = time.monotonic()
    collect(_anthropic(server).stream(REQUEST))
    assert time.monotonic() - began >= 0.4
    assert len(server.requests) == 2


@needs_shared
def test_no_retry_once_bytes_have_arrived(server: FakeServer) -> None:
    body = anthropic_body()
    server.script(Reply(chunks=pieces(body, 200), drop_after=3), Reply(chunks=[body]))
    events = collect(_anthropic(server).stream(REQUEST))
    assert len(server.requests) == 1
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "error"


# -- errors ----------------------------------------------------------------------------


def test_a_400_becomes_one_clear_line_without_the_key(server: FakeServer) -> None:
    error = (
        b'{"type":"error","error":{"type":"invalid_request_error",'
        b'"message":"messages.1.content.0: unexpected `tool_use_id`\\n found in `tool_result`'
        b" blocks: key " + KEY.encode() + b'"}}'
    )
    server.script(Reply(400, [error], content_type="application/json"))
    with pytest.raises(HTTPStatusError) as info:
        collect(_anthropic(server).stream(REQUEST))
    message = str(info.value)
    assert message.startswith("HTTP 400: messages.1.content.0: unexpected `tool_use_id` found")
    assert "\n" not in message
    assert KEY not in message
    assert len(server.requests) == 1  # a 400 is not retried


def test_a_401_names_the_key_variable(server: FakeServer) -> None:
    server.script(Reply(401, [b'{"error":{"message":"Incorrect API key provided"}}']))
    backend = OpenAIChatBackend(
        name="oa",
        model="m",
        api_key=KEY,
        api_key_env="OPENAI_API_KEY",
        base_url=server.url,
        settings=FAST,
    )
    with pytest.raises(
        Exception, match=r"Incorrect API key provided \(check the key in \$OPENAI_API_KEY\)"
    ):
        collect(backend.stream(REQUEST))


def test_gemini_error_body_in_a_list(server: FakeServer) -> None:
    body = (
        b'[{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}]'
    )
    server.script(Reply(400, [body]))
    backend = GeminiBackend(name="g", model="m", api_key=KEY, base_url=server.url, settings=FAST)
    with pytest.raises(HTTPStatusError, match=r"^HTTP 400: API key not valid\.$"):
        collect(backend.stream(REQUEST))


# -- timeouts, drops, cancellation -----------------------------------------------------


def _slow(server: FakeServer, read_timeout: float) -> AnthropicBackend:
    from dataclasses import replace

    return _anthropic(server, settings=replace(FAST, read_timeout=read_timeout, max_retries=0))


REPORTED = Usage(377, 1, cache_read_tokens=0, cache_write_tokens=0)
"""The usage the recorded stream's ``message_start`` reports."""


@needs_shared
def test_no_answer_is_a_timeout_error(server: FakeServer) -> None:
    server.script(Reply(chunks=[anthropic_body()], delay_headers=2))
    with pytest.raises(TransportTimeoutError, match="read_timeout"):
        collect(_slow(server, 0.3).stream(REQUEST))


@needs_shared
def test_a_stall_mid_stream_ends_the_calls_with_a_stream_error(server: FakeServer) -> None:
    body = anthropic_body()
    cut = body.index(b'is\\"}')  # inside the tool call's arguments
    server.script(Reply(chunks=[body[:cut], body[cut:]], stall_after=1))
    events = collect(_slow(server, 0.3).stream(REQUEST))
    assert find(events, ToolCallDelta)
    (end,) = find(events, ToolCallEnd)
    assert not end.ok
    (error,) = find(events, StreamError)
    assert "read_timeout" in error.message
    # What the provider reported before the cut (its message_start) is kept.
    assert events[-1] == MessageEnd("error", REPORTED)


@needs_shared
def test_a_connection_drop_mid_stream_keeps_what_was_decoded(server: FakeServer) -> None:
    body = anthropic_body()
    cut = body.index(b'on\\": \\"P')
    server.script(Reply(chunks=[body[:cut], body[cut:]], drop_after=1))
    events = collect(_anthropic(server).stream(REQUEST))
    assert find(events, TextDelta)
    assert find(events, ToolCallStart)[0].name == "get_weather"
    (end,) = find(events, ToolCallEnd)
    assert end.error is not None
    assert end.raw == '{"locati'
    (error,) = find(events, StreamError)
    assert "broke mid-response" in error.message
    # What the provider reported before the cut (its message_start) is kept.
    assert events[-1] == MessageEnd("error", REPORTED)


def test_connection_refused_is_a_transport_error() -> None:
    with FakeServer() as fake:
        url = fake.url  # a port that was just free
    backend = AnthropicBackend(name="c", model="m", base_url=url, settings=FAST)
    with pytest.raises(TransportError, match=r"cannot connect to 127\.0\.0\.1"):
        collect(backend.stream(REQUEST))


def _first_event_then(backend: HTTPBackend, how: str) -> None:
    async def run() -> None:
        stream = backend.stream(REQUEST)
        if how == "aclose":
            await anext(stream)
            await stream.aclose()
            return
        started = asyncio.Event()

        async def consume() -> None:
            async for _ in stream:
                started.set()

        task = asyncio.create_task(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())


@needs_shared
@pytest.mark.parametrize("how", ["aclose", "cancel"])
def test_closing_the_stream_closes_the_response(server: FakeServer, how: str) -> None:
    head = anthropic_body().split(b"event: content_block_stop")[0]
    server.script(Reply(chunks=[head], trickle=True))
    began = time.monotonic()
    _first_event_then(_anthropic(server), how)
    assert server.disconnected.wait(2), "the server never saw the client go"
    assert server.disconnected_at is not None
    assert server.disconnected_at - began < 2

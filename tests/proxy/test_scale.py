"""Usage scaled to Claude's window when the backend's is smaller: ``count_tokens`` and the
usage of streamed and collected answers, translated and passed through (``scale.py``)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.support import (
    chat_chunk,
    openai_tool_stream,
    request_body,
    running,
    sse_payloads,
    tool_loop_messages,
    windowed_config,
)
from toolwire.context import Window, window_for
from toolwire.decode.anthropic import AnthropicDecoder
from toolwire.events import Event
from toolwire.proxy import load_settings
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.raw_relay import RawRelay
from toolwire.proxy.scale import CLAUDE_1M_WINDOW, CLAUDE_WINDOW, Scale, client_window, scale_for
from toolwire.proxy.upstream import Opened
from toolwire.testing import streams

WINDOW = 32_000
# What a request may fill: the window less the answer's share ([limits] max_tokens).
ROOM = window_for("qwen3", context_window=WINDOW, max_tokens=8192).room
SCALE = Scale(CLAUDE_WINDOW, ROOM)
UPSTREAM_USAGE = {
    "input_tokens": 1000,
    "cache_creation_input_tokens": 300,
    "cache_read_input_tokens": 5000,
    "output_tokens": 1,
}


def _anthropic_reply(usage: dict[str, Any] | None = None) -> Reply:
    """An Anthropic stream whose ``message_start`` carries ``usage`` (cache counts too)."""
    payloads = streams.anthropic_payloads(
        [*streams.text("hello"), streams.end("end_turn", 7)], model="claude-up"
    )
    payloads[0]["message"]["usage"] = dict(usage or UPSTREAM_USAGE)
    payloads[-2]["usage"] = {"output_tokens": 7, "input_tokens": 1000}
    return Reply(chunks=streams.sse_chunks(payloads))


def test_scale_is_the_share_of_the_room_rounded_up() -> None:
    quarter = Scale(CLAUDE_WINDOW, 8_000)
    assert quarter(2_000) == 50_000
    assert quarter(1) == 25
    assert Scale(CLAUDE_WINDOW, 32_000)(1) == 7  # 6.25, up: never reported as empty
    assert quarter(0) == 0
    assert scale_for(CLAUDE_WINDOW, Window(32_000, 8_000, "config")) == Scale(CLAUDE_WINDOW, 24_000)
    # A window as large as Claude's is reported as it is, whatever its answers reserve.
    assert scale_for(CLAUDE_WINDOW, Window(200_000, 32_000, "config")) is None
    assert scale_for(CLAUDE_WINDOW, Window(1_000_000, 32_000, "config")) is None
    one_m = scale_for(CLAUDE_1M_WINDOW, Window(200_000, 8_000, "config"))
    assert one_m == Scale(CLAUDE_1M_WINDOW, 192_000)


def test_scaled_usage_leaves_output_tokens_alone() -> None:
    scale = Scale(CLAUDE_WINDOW, 32_000)
    scaled = scale.usage({**UPSTREAM_USAGE, "service_tier": "standard"})
    assert scaled == {
        "input_tokens": 6250,
        "cache_creation_input_tokens": 1875,
        "cache_read_input_tokens": 31250,
        "output_tokens": 1,
        "service_tier": "standard",
    }
    message: dict[str, Any] = {"id": "m", "usage": UPSTREAM_USAGE}
    start = {"type": "message_start", "message": message}
    assert scale.payload(start)["message"]["usage"]["input_tokens"] == 6250
    assert message["usage"]["input_tokens"] == 1000  # a copy: the original stays


def test_client_window_of_the_1m_variants() -> None:
    assert client_window("claude-sonnet-4-5", {}) == CLAUDE_WINDOW
    assert client_window("claude-sonnet-4-5[1m]", {}) == CLAUDE_1M_WINDOW
    beta = {"anthropic-beta": "claude-code-20250219,context-1m-2025-08-07"}
    assert client_window("claude-sonnet-4-5", beta) == CLAUDE_1M_WINDOW


def test_count_tokens_is_scaled_to_claudes_window(tmp_path: Path) -> None:
    body = request_body(tool_loop_messages())
    config = windowed_config(tmp_path, "http://127.0.0.1:9", local=WINDOW)
    counted = []
    for scale_usage in (True, False):
        with running(load_settings(config, scale_usage=scale_usage)) as url:
            reply = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
        counted.append(reply.json()["input_tokens"])
    scaled, plain = counted
    assert scaled == SCALE(plain)


def test_translated_stream_reports_scaled_input_tokens(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=openai_tool_stream()))
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            body = request_body(tool_loop_messages(), stream=True)
            counted = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    payloads = sse_payloads(reply.content)
    start, delta = payloads[0], next(p for p in payloads if p["type"] == "message_delta")
    assert start["message"]["usage"]["input_tokens"] == counted.json()["input_tokens"]
    # The upstream's own count (prompt_tokens 50), scaled; the output as it was.
    assert delta["usage"] == {"output_tokens": 12, "input_tokens": SCALE(50)}


def test_translated_collected_answer_reports_scaled_input_tokens(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 640, "completion_tokens": 3, "total_tokens": 643}
    chunks = [
        sse([(None, chat_chunk({"role": "assistant", "content": "hi"}))]),
        sse([(None, chat_chunk({}, "stop"))]),
        sse([(None, {"object": "chat.completion.chunk", "choices": [], "usage": usage})]),
        sse([(None, "[DONE]")]),
    ]
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=chunks))
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            body = request_body(tool_loop_messages())
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert reply.json()["usage"] == {"input_tokens": SCALE(640), "output_tokens": 3}


@pytest.mark.parametrize("streamed", [True, False])
def test_passed_through_usage_is_scaled(tmp_path: Path, streamed: bool) -> None:
    with FakeServer() as upstream:
        upstream.script(_anthropic_reply())
        config = windowed_config(tmp_path, upstream.url, claude=WINDOW)
        settings = load_settings(config, default_backend="claude")
        with running(settings) as url:
            body = request_body(tool_loop_messages(), stream=streamed)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    if streamed:
        payloads = sse_payloads(reply.content)
        start = payloads[0]["message"]["usage"]
        delta = next(p for p in payloads if p["type"] == "message_delta")["usage"]
        text = next(p for p in payloads if p["type"] == "content_block_delta")
        assert text["delta"]["text"] == "hello"
        assert [p["type"] for p in payloads][-1] == "message_stop"
    else:
        start = delta = reply.json()["usage"]
        assert reply.json()["content"] == [{"type": "text", "text": "hello"}]
    assert start["cache_read_input_tokens"] == SCALE(5000)
    assert start["cache_creation_input_tokens"] == SCALE(300)
    assert delta["input_tokens"] == SCALE(1000)
    assert delta["output_tokens"] == 7


def test_no_scaling_for_a_window_as_large_as_claudes(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(_anthropic_reply())
        # claude-up is a Claude model: the family's 200k, nothing to scale.
        settings = load_settings(windowed_config(tmp_path, upstream.url), default_backend="claude")
        with running(settings) as url:
            body = request_body(tool_loop_messages(), stream=True)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert sse_payloads(reply.content)[0]["message"]["usage"] == UPSTREAM_USAGE


def test_the_1m_beta_scales_to_a_million(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(_anthropic_reply())
        config = windowed_config(tmp_path, upstream.url, claude=200_000)
        settings = load_settings(config, default_backend="claude")
        with running(settings) as url:
            body = request_body(tool_loop_messages(), stream=True)
            headers = {"anthropic-beta": "context-1m-2025-08-07"}
            reply = httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=10)
    usage = sse_payloads(reply.content)[0]["message"]["usage"]
    room = window_for("claude-up", context_window=200_000, max_tokens=8192).room
    assert usage["input_tokens"] == Scale(CLAUDE_1M_WINDOW, room)(1000)
    assert usage["input_tokens"] > 5000  # 1000 of 200k is more than 5000 of 1M


def _relayed(body: bytes, cuts: list[int], scale: Scale | None) -> bytes:
    """What the raw relay sends for ``body`` read in pieces cut at ``cuts``."""
    bounds = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    chunks = [body[a:b] for a, b in itertools.pairwise(bounds)]
    relay = RawRelay(scale)
    decoder = AnthropicDecoder()
    relay.attach(decoder)

    async def upstream() -> AsyncGenerator[Event, None]:
        for chunk in chunks:
            relay.tap(chunk)
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    async def run() -> bytes:
        rest = upstream()
        opened = Opened(await rest.__anext__(), rest, 0.0)
        return b"".join([piece async for piece in relay._relay(opened, Metrics())])

    return asyncio.run(run())


BODY = b"".join(_anthropic_reply().chunks)


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=6))
def test_raw_relay_scales_at_any_chunking(cuts: list[int]) -> None:
    plain = sse_payloads(_relayed(BODY, cuts, None))
    scaled = sse_payloads(_relayed(BODY, cuts, SCALE))
    assert plain == sse_payloads(BODY)
    assert scaled == [SCALE.payload(p) for p in plain]
    assert scaled[0]["message"]["usage"]["input_tokens"] == SCALE(1000)


def test_a_full_pass_through_of_the_1m_beta_is_not_scaled(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(_anthropic_reply())
        config = windowed_config(tmp_path, upstream.url)
        text = config.read_text().replace(
            'model = "claude-up"', 'model = "claude-up"\npassthrough = "full"'
        )
        config.write_text(text)
        with running(load_settings(config, default_backend="claude")) as url:
            body = request_body(tool_loop_messages(), stream=True)
            headers = {"anthropic-beta": "context-1m-2025-08-07"}
            reply = httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=10)
    # The upstream got the beta too: a Claude model there has the 1M window.
    assert upstream.requests[0].headers["anthropic-beta"] == "context-1m-2025-08-07"
    assert sse_payloads(reply.content)[0]["message"]["usage"] == UPSTREAM_USAGE

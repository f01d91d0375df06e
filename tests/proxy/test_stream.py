"""The proxy translating an OpenAI-Chat upstream into the Anthropic Messages API."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    ARGS_PIECES,
    FILE_TEXT,
    decode_anthropic,
    openai_text_stream,
    openai_tool_stream,
    request_body,
    running,
    sdk_final_message,
    settings_for,
    sse_payloads,
    tool_loop_messages,
)
from toolwire.events import MessageEnd, TextDelta, ToolCallEnd, ToolCallStart

EXPECTED_ARGS = json.loads("".join(ARGS_PIECES))


@pytest.fixture
def proxy_url(tmp_path: Path, upstream: FakeServer) -> Iterator[str]:
    with running(settings_for(tmp_path, upstream.url, upstream.url)) as url:
        yield url


def test_streamed_tool_call_decodes_with_toolwire(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_tool_stream()))
    body = request_body([{"role": "user", "content": "Read src/a.py"}], stream=True)
    reply = httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = decode_anthropic(reply.content)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading it."
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert (start.id, start.name) == ("call_abc", "Read")
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments == EXPECTED_ARGS
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "tool_use"
    kinds = [p["type"] for p in sse_payloads(reply.content)]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    # The tool_use block starts empty: its input travels only as input_json_delta pieces.
    deltas = [
        p["delta"]["partial_json"]
        for p in sse_payloads(reply.content)
        if p["type"] == "content_block_delta" and p["delta"]["type"] == "input_json_delta"
    ]
    assert deltas == ARGS_PIECES


def test_upstream_body_is_openai_chat(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_text_stream("ok")))
    body = request_body(tool_loop_messages(), stream=True)
    # Claude Code posts to /v1/messages?beta=true: the query string changes nothing.
    httpx2.post(f"{proxy_url}/v1/messages?beta=true", json=body, timeout=10)
    (sent,) = upstream.requests
    assert sent.path == "/v1/chat/completions"
    wire = sent.json()
    assert wire["model"] == "qwen3"
    assert wire["max_tokens"] == 32000  # Claude Code's 128000 clamped
    assert wire["messages"][0] == {"role": "system", "content": "You are a coding agent."}
    roles = [m["role"] for m in wire["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert wire["messages"][3]["content"] == FILE_TEXT
    assert "cache_control" not in json.dumps(wire)
    assert wire["tools"][0]["function"]["name"] == "Read"


def test_anthropic_sdk_accumulates_the_stream(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_tool_stream()))
    message = sdk_final_message(proxy_url, "claude-opus-5-5", "Read src/a.py")
    assert message.stop_reason == "tool_use"
    text, tool = message.content
    assert text.type == "text"
    assert text.text == "Reading it."
    assert tool.type == "tool_use"
    assert (tool.id, tool.name, tool.input) == ("call_abc", "Read", EXPECTED_ARGS)
    assert message.usage.output_tokens == 12


def test_non_streaming_response(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_tool_stream()))
    body = request_body([{"role": "user", "content": "Read src/a.py"}])
    reply = httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200
    message = reply.json()
    assert message["type"] == "message"
    assert message["stop_reason"] == "tool_use"
    assert message["content"][1] == {
        "type": "tool_use",
        "id": "call_abc",
        "name": "Read",
        "input": EXPECTED_ARGS,
    }


def test_count_tokens_counts_tool_blocks(upstream: FakeServer, proxy_url: str) -> None:
    small = request_body([{"role": "user", "content": "hi"}])
    big = request_body(tool_loop_messages())
    counts = [
        httpx2.post(f"{proxy_url}/v1/messages/count_tokens", json=b, timeout=10).json()
        for b in (small, big)
    ]
    assert all(c["input_tokens"] > 0 for c in counts)
    # The tool result (the file's text) and the call are counted, not just the text.
    assert counts[1]["input_tokens"] > counts[0]["input_tokens"] + len(FILE_TEXT) // 8
    assert upstream.requests == []  # counted locally


def test_models_health_and_metrics(upstream: FakeServer, proxy_url: str) -> None:
    models = httpx2.get(f"{proxy_url}/v1/models").json()
    ids = [m["id"] for m in models["data"]]
    assert "local,qwen3" in ids
    assert "claude,claude-up" in ids
    assert httpx2.get(f"{proxy_url}/healthz").json() == {"status": "ok"}
    upstream.script(Reply(chunks=openai_text_stream("hello")))
    body = request_body([{"role": "user", "content": "hi"}], stream=True)
    httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    text = httpx2.get(f"{proxy_url}/metrics").text
    assert "# TYPE toolwire_proxy_requests_total counter" in text
    assert 'toolwire_proxy_requests_total{backend="local",route="default"} 1' in text
    assert "toolwire_proxy_streams_total 1" in text
    # The latencies are histograms per backend and dialect (prometheus_client).
    labels = '{backend="local",dialect="anthropic"}'
    for name in ("upstream_latency", "time_to_first_byte", "added_latency"):
        assert f"toolwire_proxy_{name}_seconds_count{labels} 1.0" in text
    assert "# TYPE toolwire_proxy_time_to_first_byte_seconds histogram" in text


def test_events_are_relayed_as_they_arrive(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_tool_stream(), chunk_delay=0.15))
    body = request_body([{"role": "user", "content": "Read src/a.py"}], stream=True)
    seen: dict[str, float] = {}
    with httpx2.stream("POST", f"{proxy_url}/v1/messages", json=body, timeout=10) as reply:
        for line in reply.iter_lines():
            if not line.startswith("data: "):
                continue
            payload = json.loads(line[6:])
            block = payload.get("content_block", {})
            key = "tool_start" if block.get("type") == "tool_use" else payload["type"]
            seen.setdefault(key, time.monotonic())
    # The tool_use block opens when the upstream names the tool, before its arguments
    # (three more upstream chunks, 0.15 s apart) and the end have arrived.
    assert seen["message_stop"] - seen["tool_start"] > 0.4

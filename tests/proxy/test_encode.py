"""The events -> Anthropic stream encoder, on its own."""

from __future__ import annotations

from typing import Any

from tests.proxy.support import decode_anthropic
from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.proxy.encode import AnthropicEncoder, accumulate, sse_bytes


def _encode(events: list[Event]) -> list[dict[str, Any]]:
    encoder = AnthropicEncoder("m")
    payloads = [encoder.start()]
    for event in events:
        payloads += encoder.feed(event)
    return payloads


def test_interleaved_calls_become_sequential_blocks() -> None:
    events: list[Event] = [
        ToolCallStart("a", "Read", 0),
        ToolCallDelta("a", '{"file_path": '),
        ToolCallStart("b", "Grep", 1),
        ToolCallDelta("b", '{"pattern": "x"}'),
        ToolCallDelta("a", '"a.py"}'),
        ToolCallEnd("a", {"file_path": "a.py"}),
        ToolCallEnd("b", {"pattern": "x"}),
        MessageEnd("tool_use", Usage(output_tokens=5)),
    ]
    payloads = _encode(events)
    message = accumulate(payloads)
    assert [(b["id"], b["input"]) for b in message["content"]] == [
        ("a", {"file_path": "a.py"}),
        ("b", {"pattern": "x"}),
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["output_tokens"] == 5
    starts = [p["index"] for p in payloads if p["type"] == "content_block_start"]
    stops = [p["index"] for p in payloads if p["type"] == "content_block_stop"]
    assert starts == stops == [0, 1]


def test_a_call_still_open_at_the_end_is_closed() -> None:
    events: list[Event] = [
        ToolCallStart("a", "Read", 0),
        ToolCallStart("b", "Read", 1),
        ToolCallDelta("b", "{}"),
        MessageEnd("tool_use"),
    ]
    message = accumulate(_encode(events))
    assert [b["id"] for b in message["content"]] == ["a", "b"]


def test_thinking_signature_only_when_sent() -> None:
    events: list[Event] = [
        ThinkingDelta("hmm"),
        ThinkingDelta("", signature="sig-1"),
        TextDelta("answer"),
        MessageEnd("end_turn"),
    ]
    message = accumulate(_encode(events))
    assert message["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig-1"}
    unsigned = accumulate(_encode([ThinkingDelta("hmm"), MessageEnd("end_turn")]))
    assert unsigned["content"][0]["signature"] == ""


def test_tool_use_stop_without_a_call_is_end_turn() -> None:
    message = accumulate(_encode([TextDelta("hi"), MessageEnd("tool_use")]))
    assert message["stop_reason"] == "end_turn"


def test_stream_error_ends_with_an_error_event() -> None:
    payloads = _encode([TextDelta("x"), StreamError("cut"), MessageEnd("error")])
    assert payloads[-1] == {"type": "error", "error": {"type": "api_error", "message": "cut"}}
    body = b"".join(sse_bytes(p) for p in payloads)
    assert any(isinstance(e, StreamError) for e in decode_anthropic(body))


def test_tag_format_arguments_are_sent_whole() -> None:
    encoder = AnthropicEncoder("m", json_args=False)
    payloads = [encoder.start()]
    events: list[Event] = [
        ToolCallStart("a", "Read", 0),
        ToolCallDelta("a", "<parameter=file_path>a.py"),
        ToolCallEnd("a", {"file_path": "a.py"}),
        MessageEnd("tool_use"),
    ]
    for event in events:
        payloads += encoder.feed(event)
    assert accumulate(payloads)["content"][0]["input"] == {"file_path": "a.py"}

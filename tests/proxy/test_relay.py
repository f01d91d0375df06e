"""The relay's hot path: the SSE fast path (the lean transport: tests/backends/test_wire.py)."""

from __future__ import annotations

from toolwire.events import Event, MessageEnd, TextDelta, ToolCallDelta, ToolCallStart
from toolwire.proxy.encode import AnthropicEncoder, sse_bytes


def test_fast_text_frames_equal_the_payload_frames() -> None:
    events: list[Event] = [
        TextDelta("plain"),
        TextDelta('quotes " \\ and \n newlines \x00 \u2028 é 😀'),
        TextDelta(""),
        ToolCallStart("call_1", "Read", 0),
        ToolCallDelta("call_1", '{"path":'),
        TextDelta("after a tool"),
        MessageEnd("end_turn"),
        TextDelta("after the end"),
    ]
    fast, slow = AnthropicEncoder("m"), AnthropicEncoder("m")
    for event in events:
        expected = b"".join(sse_bytes(p) for p in slow.feed(event))
        assert fast.feed_sse(event) == expected

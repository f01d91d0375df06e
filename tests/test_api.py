"""The public API is explicit and pinned: a change to it is a decision, not an accident."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import toolwire
from toolwire.events import (
    MessageEnd,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    event_to_dict,
)

EXPORTED = [
    "FORMATS",
    "Decoder",
    "Event",
    "HTTPStatusError",
    "JsonStream",
    "LifecycleError",
    "MessageEnd",
    "ParseResult",
    "ProtocolError",
    "SSEDecoder",
    "SSEEvent",
    "StreamError",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolwireError",
    "TransportError",
    "TransportTimeoutError",
    "Usage",
    "UsageError",
    "__version__",
    "decoder_for",
    "event_to_dict",
]


def test_exported_members() -> None:
    assert toolwire.__all__ == EXPORTED
    for name in toolwire.__all__:
        assert hasattr(toolwire, name), name


def test_error_tree() -> None:
    assert issubclass(toolwire.LifecycleError, toolwire.UsageError)
    assert issubclass(toolwire.HTTPStatusError, toolwire.TransportError)
    assert issubclass(toolwire.TransportTimeoutError, toolwire.TransportError)
    for cls in (toolwire.UsageError, toolwire.ProtocolError, toolwire.TransportError):
        assert issubclass(cls, toolwire.ToolwireError)
    assert str(toolwire.HTTPStatusError(429, "slow down")) == "HTTP 429: slow down"


def test_events_are_frozen_and_comparable() -> None:
    delta = ToolCallDelta("c1", '{"a"', ("a",), (1,))
    assert delta == ToolCallDelta("c1", '{"a"', ("a",), (1,))
    assert delta != ToolCallDelta("c1", '{"a"', ("a",), (2,))
    assert not hasattr(delta, "__dict__")  # slotted: no stray attributes
    # ToolCallDelta is the one event left unfrozen, for speed (see its docstring).
    frozen: list[Any] = [
        TextDelta("x"),
        ThinkingDelta("x"),
        ToolCallStart("c1", "Read", 0),
        ToolCallEnd("c1", arguments={}),
        MessageEnd("end_turn"),
        StreamError("cut"),
        Usage(input_tokens=1),
    ]
    for event in frozen:
        name = dataclasses.fields(event)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, name, "y")


def test_event_json_form() -> None:
    assert event_to_dict(ToolCallDelta("c1", "x", ("path",), ("a.py",))) == {
        "type": "tool_call_delta",
        "id": "c1",
        "text": "x",
        "fields": ["path"],
    }
    assert event_to_dict(ToolCallEnd("c1", arguments=None)) == {
        "type": "tool_call_end",
        "id": "c1",
        "arguments": None,
    }
    assert event_to_dict(ToolCallEnd("c1", error="bad", raw="{")) == {
        "type": "tool_call_end",
        "id": "c1",
        "error": "bad",
        "raw": "{",
    }
    assert event_to_dict(MessageEnd("end_turn", Usage(input_tokens=3))) == {
        "type": "message_end",
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3},
    }
    assert event_to_dict(StreamError("cut")) == {"type": "stream_error", "message": "cut"}

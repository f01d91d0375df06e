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


UPDATES_EXPORTED = [
    "CLIENT_PROFILES",
    "DEFAULT_INTERVAL",
    "PROFILES",
    "CallRecord",
    "CallSource",
    "Envelope",
    "MetricsSnapshot",
    "Notification",
    "OutputWindow",
    "Profile",
    "ResponseTranslator",
    "SessionMetrics",
    "ToolCallState",
    "ToolCallStatus",
    "ToolKind",
    "UpdateBuilder",
    "UpdateEngine",
    "apply_update",
    "cap_text",
    "changed_fields",
    "diff_content",
    "location",
    "profile_for_client",
    "same",
    "state_to_wire",
    "terminal_content",
    "text_content",
]


def test_the_update_engine_exports_are_pinned() -> None:
    import toolwire.updates

    assert toolwire.updates.__all__ == UPDATES_EXPORTED
    for name in UPDATES_EXPORTED:
        assert getattr(toolwire.updates, name) is not None


def test_the_testing_exports_are_pinned() -> None:
    import toolwire.testing

    assert toolwire.testing.__all__ == [
        "ErrorResponse",
        "FunctionBackend",
        "InMemoryConnection",
        "connect_in_memory",
        "round_trip",
        "sdk_params",
        "to_sdk",
        "to_sdk_update",
    ]
    for name in toolwire.testing.__all__:
        assert getattr(toolwire.testing, name) is not None


def test_the_deprecated_acp_module_is_the_engine_under_its_old_name() -> None:
    """``toolwire.acp`` keeps working for one release: the same objects, not copies."""
    import toolwire.acp
    import toolwire.updates
    from toolwire.testing.record import TrafficRecorder, read_recording, redact

    for name in UPDATES_EXPORTED:
        assert getattr(toolwire.acp, name) is getattr(toolwire.updates, name), name
    assert toolwire.acp.Recorder is TrafficRecorder
    assert (toolwire.acp.read_recording, toolwire.acp.redact) == (read_recording, redact)
    assert set(toolwire.acp.__all__) == {*UPDATES_EXPORTED, "Recorder", "read_recording", "redact"}

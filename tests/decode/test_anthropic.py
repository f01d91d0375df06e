"""AnthropicDecoder: recorded and hand-written Messages streams, fed in any chunking.

Every stream is decoded whole, byte by byte and at random split points (the events must
be identical), checked against the invariants of docs/design.md and a reviewed snapshot, and its
final text and tool arguments are compared with what the official SDK accumulates from
the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# Private on purpose, no public equivalent: the oracle is the SDK's own SSE decoder and
# its per-event reducer (with the raw partial JSON it keeps per block); the SDK is pinned
# exactly in the dev dependencies.
from anthropic._streaming import SSEDecoder as SDKSSEDecoder
from anthropic.lib.streaming._messages import accumulate_event
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.contract import chunking_contract
from tests.helpers import (
    FIXTURES,
    RECORDED,
    check_invariants,
    decode_ways,
    feed_pieces,
    needs_shared,
    read_stream,
)
from toolwire.decode.anthropic import AnthropicDecoder
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

STREAMS: dict[str, Path] = {
    "anthropic_tool_use": RECORDED / "anthropic_tool_use.sse",
    "anthropic_incomplete_partial_json": RECORDED / "anthropic_incomplete_partial_json.sse",
    **{p.stem: p for p in sorted(FIXTURES.glob("anthropic_*.sse"))},
}


def _data(name: str) -> bytes:
    return read_stream(STREAMS[name])


def _decode(data: bytes) -> list[Event]:
    return feed_pieces(AnthropicDecoder(), [data])


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [ev for ev in events if isinstance(ev, kind)]


# -- every stream, every chunking ---------------------------------------------------------


(
    test_whole_and_bytewise_give_the_same_valid_events,
    test_any_split_gives_the_same_events,
    test_events_match_the_reviewed_snapshot,
    test_other_line_endings_decode_the_same,
    test_a_stream_cut_anywhere_still_closes_every_call,
) = chunking_contract(AnthropicDecoder, _data, STREAMS, [(b"\n", b"\r\n"), (b"\n", b"\r")])


# -- the official SDK as oracle -------------------------------------------------------------

_SDK_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)


def _sdk_accumulate(data: bytes) -> tuple[Any, dict[int, bytes]]:
    """The SDK's accumulated message for the same bytes (its SSE decoder, its reducer)."""
    snapshot: Any = None
    json_bufs: dict[int, bytes] = {}
    # The SDK's SSE decoder drops an event not followed by a blank line (the spec's rule).
    for sse in SDKSSEDecoder().iter_bytes(iter([data + b"\n\n"])):
        payload = json.loads(sse.data)
        if payload.get("type") in _SDK_TYPES:
            snapshot = accumulate_event(
                event=payload, current_snapshot=snapshot, json_bufs=json_bufs
            )
    return snapshot, json_bufs


@pytest.mark.parametrize("name", STREAMS)
def test_text_thinking_and_arguments_agree_with_the_sdk(name: str) -> None:
    data = _data(name)
    events = _decode(data)
    message, json_bufs = _sdk_accumulate(data)
    blocks = list(enumerate(message.content))

    text = "".join(b.text for _, b in blocks if b.type == "text")
    assert "".join(ev.text for ev in _of(events, TextDelta)) == text
    thinking = _of(events, ThinkingDelta)
    assert "".join(ev.text for ev in thinking) == "".join(
        b.thinking for _, b in blocks if b.type == "thinking"
    )
    assert [ev.signature for ev in thinking if ev.signature] == [
        b.signature for _, b in blocks if b.type == "thinking"
    ]
    assert [ev.redacted for ev in thinking if ev.redacted] == [
        b.data for _, b in blocks if b.type == "redacted_thinking"
    ]

    ends = {ev.id: ev for ev in _of(events, ToolCallEnd)}
    tools = [(i, b) for i, b in blocks if b.type in ("tool_use", "server_tool_use")]
    assert [b.id for _, b in tools] == [ev.id for ev in _of(events, ToolCallStart)]
    for i, block in tools:
        end = ends[block.id]
        if end.ok:
            assert end.arguments == block.input
        else:  # cut: the SDK shows a partial object; both keep the same raw text
            assert end.raw == json_bufs.get(i, b"").decode()


# -- what a user of the events relies on --------------------------------------------------


def _event_end(data: bytes, marker: bytes) -> int:
    """Offset just past the blank line ending the SSE event that contains ``marker``."""
    return data.index(b"\n\n", data.index(marker)) + 2


@needs_shared
def test_tool_call_starts_on_the_very_bytes_that_complete_its_event() -> None:
    data = _data("anthropic_tool_use")
    end = _event_end(data, b'"type":"tool_use"')
    decoder = AnthropicDecoder()
    before = decoder.feed(data[: end - 1])
    assert not _of(before, ToolCallStart)
    assert _of(decoder.feed(data[end - 1 : end]), ToolCallStart) == [
        ToolCallStart("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", 0)
    ]


@needs_shared
def test_fields_complete_on_the_delta_that_closes_the_value() -> None:
    deltas = _of(_decode(_data("anthropic_tool_use")), ToolCallDelta)
    assert [(d.text, d.fields) for d in deltas] == [
        ('{"locati', ()),
        ('on": "P', ()),
        ("ar", ()),
        ('is"}', ("location",)),
    ]


@needs_shared
def test_first_empty_argument_delta_says_nothing() -> None:
    events = _decode(_data("anthropic_tool_use"))
    assert all(d.text for d in _of(events, ToolCallDelta))
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd("toolu_01NRLabsLyVHZPKxbKvkfSMn", arguments={"location": "Paris"})
    ]
    assert events[-1] == MessageEnd(
        "tool_use",
        Usage(input_tokens=377, output_tokens=65, cache_read_tokens=0, cache_write_tokens=0),
    )


def test_tools_without_arguments_end_with_an_empty_object() -> None:
    ends = {ev.id: ev for ev in _of(_decode(_data("anthropic_thinking_tools")), ToolCallEnd)}
    assert ends["toolu_own_ls"].arguments == {}  # one "" delta
    assert ends["toolu_own_time"].arguments == {}  # no delta at all


def test_thinking_keeps_its_signature_and_redacted_payload() -> None:
    events = _decode(_data("anthropic_thinking_tools"))
    thinking = _of(events, ThinkingDelta)
    assert "".join(t.text for t in thinking) == "The user wants the file. Read it first, then list."
    assert [t.signature for t in thinking if t.signature] == [
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrk"
    ]
    assert [t.redacted for t in thinking if t.redacted] == [
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"
    ]
    assert events[-1] == MessageEnd(
        "tool_use",
        Usage(input_tokens=20, output_tokens=88, cache_read_tokens=100, cache_write_tokens=5),
    )


@needs_shared
def test_pings_and_unknown_types_change_nothing() -> None:
    def without(data: bytes, *markers: bytes) -> bytes:
        kept = [e for e in data.split(b"\n\n") if not any(m in e for m in markers)]
        return b"\n\n".join(kept)

    for name, markers in [
        ("anthropic_tool_use", (b'"ping"',)),
        ("anthropic_thinking_tools", (b'"ping"', b"citations_delta")),
        ("anthropic_server_tool_pause", (b"future_",)),
    ]:
        data = _data(name)
        assert _decode(without(data, *markers)) == _decode(data), name


@needs_shared
def test_max_tokens_mid_tool_fails_the_call_and_keeps_its_text() -> None:
    events = _decode(_data("anthropic_incomplete_partial_json"))
    check_invariants(events)
    (end,) = _of(events, ToolCallEnd)
    assert not end.ok
    assert "max_tokens" in (end.error or "")
    assert end.raw == "".join(d.text for d in _of(events, ToolCallDelta))
    assert end.raw is not None
    assert end.raw.endswith('\n"Filing taxes')
    assert "".join(t.text for t in _of(events, TextDelta)).endswith("Let me do that for you now.")
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "max_tokens"


def test_context_window_exceeded_is_a_cut_like_max_tokens() -> None:
    events = _decode(_data("anthropic_context_window"))
    (end,) = _of(events, ToolCallEnd)
    assert not end.ok
    assert end.raw == '{"file_path": "notes.md", "content": "# No'
    assert events[-1] == MessageEnd("max_tokens", Usage(input_tokens=199000, output_tokens=1000))


def test_pause_turn_with_a_server_tool_asks_to_continue() -> None:
    events = _decode(_data("anthropic_server_tool_pause"))
    # pause_turn maps to tool_use (send the response back to continue), a call made by
    # the server stays marked as such, and its end carries the result block's content.
    assert _of(events, ToolCallStart) == [
        ToolCallStart("srvtoolu_own_search", "web_search", 0, server=True)
    ]
    (end,) = _of(events, ToolCallEnd)
    assert end.arguments == {"query": "agent client protocol"}
    assert end.result[0]["url"] == "https://agentclientprotocol.com"
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "tool_use"


def test_server_tool_use_is_marked_and_keeps_the_providers_stop_reason() -> None:
    """A server_tool_use answered in the same message, then end_turn: the turn is over.

    The call is the provider's (server=True) and must not make the response tool_use, or
    the agent would try to run web_search itself; any interleaving of text, client and
    server calls keeps one end per call and the result on the server call's end.
    """

    def block(i: int, kind: str, extra: str) -> str:
        return (
            f'event: content_block_start\ndata: {{"type":"content_block_start","index":{i},'
            f'"content_block":{{"type":"{kind}",{extra}}}}}\n\n'
            f'event: content_block_stop\ndata: {{"type":"content_block_stop","index":{i}}}\n\n'
        )

    body = (
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{}}}\n\n'
        + block(0, "server_tool_use", '"id":"srv_1","name":"web_search","input":{"query":"q"}')
        + block(1, "web_search_tool_result", '"tool_use_id":"srv_1","content":[{"url":"u"}]')
        + block(2, "text", '"text":"found it"')
        + "event: message_delta\n"
        + 'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n'
        + 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    ).encode()
    events = _decode(body)
    assert _of(events, ToolCallStart) == [ToolCallStart("srv_1", "web_search", 0, server=True)]
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd("srv_1", arguments={"query": "q"}, result=[{"url": "u"}])
    ]
    assert events[-1] == MessageEnd("end_turn")


def test_error_event_fails_the_open_call_then_ends_the_message() -> None:
    events = _decode(_data("anthropic_error_midstream"))
    assert [ev.type for ev in events[-3:]] == ["tool_call_end", "stream_error", "message_end"]
    end, error, message_end = events[-3:]
    assert isinstance(end, ToolCallEnd)
    assert end.raw == '{"command": "ls -'
    assert isinstance(error, StreamError)
    assert "Overloaded" in error.message
    assert error.raw is not None
    assert json.loads(error.raw)["error"]["type"] == "overloaded_error"
    assert message_end == MessageEnd("error")
    assert _of(events, TextDelta) == [TextDelta("Listing files.")]


def test_body_closed_after_message_delta_ends_with_the_known_reason() -> None:
    events = _decode(_data("anthropic_no_message_stop"))
    assert events == [
        TextDelta("Done."),
        MessageEnd("end_turn", Usage(input_tokens=8, output_tokens=3)),
    ]


@needs_shared
def test_body_cut_mid_arguments_fails_the_call() -> None:
    data = _data("anthropic_tool_use")
    cut = _event_end(data, b'"partial_json":"ar"')
    events = _decode(data[:cut])
    check_invariants(events)
    assert events[-3:] == [
        ToolCallEnd(
            "toolu_01NRLabsLyVHZPKxbKvkfSMn",
            error="the stream failed: the stream ended before the response did",
            raw='{"location": "Par',
        ),
        StreamError("the stream ended before the response did"),
        # What message_start reported before the cut: the provider bills it.
        MessageEnd("error", Usage(377, 1, cache_read_tokens=0, cache_write_tokens=0)),
    ]


@needs_shared
def test_every_prefix_of_a_stream_still_keeps_the_invariants() -> None:
    data = _data("anthropic_tool_use")
    for n in range(len(data) + 1):
        check_invariants(_decode(data[:n]))


def test_input_sent_whole_at_block_start_is_used_when_no_text_follows() -> None:
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_w", "name": "Read", "input": {"a": 1}},
    }
    stop = {"type": "content_block_stop", "index": 0}
    delta = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": '{"b": 2}'},
    }
    whole = _of(_decode(_sse(start, stop, {"type": "message_stop"})), ToolCallEnd)
    streamed = _of(_decode(_sse(start, delta, stop, {"type": "message_stop"})), ToolCallEnd)
    assert whole == [ToolCallEnd("toolu_w", arguments={"a": 1})]
    assert streamed == [ToolCallEnd("toolu_w", arguments={"b": 2})]


@needs_shared
def test_dispatch_follows_the_payload_type_not_the_event_line() -> None:
    data = _data("anthropic_tool_use")
    renamed = b"\n".join(
        b"event: whatever" if line.startswith(b"event:") else line for line in data.split(b"\n")
    )
    assert _decode(renamed) == _decode(data)


# -- broken input never raises ------------------------------------------------------------

_INDEX = st.sampled_from([0, 1, 2, None, "1", [0]])
_ANY: st.SearchStrategy[Any] = (
    st.none() | st.integers(-2, 3) | st.text(max_size=6) | st.just({}) | st.just([])
)
_PAYLOADS = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("content_block_start"),
            "index": _INDEX,
            "content_block": st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["tool_use", "server_tool_use", "text", "thinking"]),
                    "id": st.sampled_from(["t1", "t2", None, 5]),
                    "name": st.sampled_from(["Read", None, ""]),
                    "input": st.sampled_from([{}, {"a": 1}, None, "x"]),
                }
            )
            | _ANY,
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("content_block_delta"),
            "index": _INDEX,
            "delta": st.fixed_dictionaries(
                {
                    "type": st.sampled_from(
                        ["input_json_delta", "text_delta", "thinking_delta", "signature_delta"]
                    ),
                    "partial_json": st.sampled_from(["", "{", '"a": 1', "}", None]),
                    "text": _ANY,
                }
            )
            | _ANY,
        }
    ),
    st.fixed_dictionaries({"type": st.just("content_block_stop"), "index": _INDEX}),
    st.fixed_dictionaries(
        {
            "type": st.just("message_delta"),
            "delta": st.fixed_dictionaries({"stop_reason": _ANY}) | _ANY,
            "usage": st.fixed_dictionaries({"output_tokens": _ANY}) | _ANY,
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["message_stop", "ping", "error", "x"])}),
    st.fixed_dictionaries({"type": st.just("error"), "error": _ANY}),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(payloads=st.lists(_PAYLOADS | st.just("not json"), max_size=12))
def test_malformed_streams_never_raise_and_keep_the_invariants(
    payloads: list[dict[str, Any] | str],
) -> None:
    body = b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )
    ways = decode_ways(AnthropicDecoder, body)
    assert ways["bytewise"] == ways["whole"]
    check_invariants(ways["whole"])


@needs_shared
def test_payloads_fed_without_sse_framing_decode_the_same() -> None:
    for name in ("anthropic_tool_use", "anthropic_error_midstream"):
        data = _data(name)
        decoder = AnthropicDecoder()
        events: list[Event] = []
        for sse in SDKSSEDecoder().iter_bytes(iter([data + b"\n\n"])):
            events += decoder.feed_payload(json.loads(sse.data))
        events += decoder.close()
        assert _same_raw(events) == _same_raw(_decode(data)), name


def _same_raw(events: list[Event]) -> list[Event]:
    """Error payloads re-serialized: without SSE the decoder has no original text to keep."""
    return [
        StreamError(ev.message, json.dumps(json.loads(ev.raw)))
        if isinstance(ev, StreamError) and ev.raw
        else ev
        for ev in events
    ]

"""OpenAIChatDecoder: recorded and hand-written Chat Completions streams, in any chunking.

Every stream is decoded whole, byte by byte and at random split points (the events must
be identical), checked against the invariants of docs/design.md and a reviewed snapshot; streams
the official SDK can accumulate are compared with its final text and arguments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# Private on purpose, no public equivalent: the SDK's own SSE decoder (pinned exactly in
# the dev dependencies).
from openai._streaming import SSEDecoder as SDKSSEDecoder
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

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
from toolwire.decode.openai_chat import OpenAIChatDecoder
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
    "openai_chat_parallel_tool_calls": RECORDED / "openai_chat_parallel_tool_calls.sse",
    **{p.stem: p for p in sorted(FIXTURES.glob("openai_chat_*.sse"))},
}


def _data(name: str) -> bytes:
    return read_stream(STREAMS[name])


def _decode(data: bytes) -> list[Event]:
    return feed_pieces(OpenAIChatDecoder(), [data])


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "choices": [choice]}


def _body(*items: dict[str, Any] | str) -> bytes:
    return b"".join(
        f"data: {it if isinstance(it, str) else json.dumps(it)}\n\n".encode() for it in items
    )


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [ev for ev in events if isinstance(ev, kind)]


# -- every stream, every chunking ---------------------------------------------------------


(
    test_whole_and_bytewise_give_the_same_valid_events,
    test_any_split_gives_the_same_events,
    test_events_match_the_reviewed_snapshot,
    test_other_line_endings_decode_the_same,
    test_a_stream_cut_anywhere_still_closes_every_call,
) = chunking_contract(OpenAIChatDecoder, _data, STREAMS, [(b"\n", b"\r\n"), (b"\n", b"\r")])


# -- the official SDK as oracle -------------------------------------------------------------

# Streams in the shape the SDK accumulates correctly; it cannot key calls without an
# index (openai/openai-python #2806), and it concatenates repeated names and reused indexes.
_SDK_STREAMS = [
    "openai_chat_parallel_tool_calls",
    "openai_chat_interleaved",
    "openai_chat_args_before_name",
    "openai_chat_length",
    "openai_chat_reasoning_text",
    "openai_chat_refusal",
    "openai_chat_error",
    "openai_chat_no_done",
]


def _sdk_message(data: bytes) -> Any:
    """Choice 0's message as the SDK's ChatCompletionStreamState accumulates it."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for sse in SDKSSEDecoder().iter_bytes(iter([data])):
        if sse.data.startswith("[DONE]"):
            break
        payload = json.loads(sse.data)
        if "error" in payload:
            break  # the SDK raises here; what it accumulated before is what it has
        state.handle_chunk(ChatCompletionChunk.model_validate(payload))
    choices = state.current_completion_snapshot.choices
    return next(c for c in choices if c.index == 0).message


@pytest.mark.parametrize("name", _SDK_STREAMS)
def test_text_and_arguments_agree_with_the_sdk(name: str) -> None:
    data = _data(name)
    events = _decode(data)
    message = _sdk_message(data)
    text = (message.content or "") + (message.refusal or "")
    assert "".join(ev.text for ev in _of(events, TextDelta)) == text

    sdk_calls = message.tool_calls or []
    starts = _of(events, ToolCallStart)
    assert [(s.id, s.name) for s in starts] == [(c.id, c.function.name) for c in sdk_calls]
    ends = {ev.id: ev for ev in _of(events, ToolCallEnd)}
    for call in sdk_calls:
        end = ends[call.id]
        if end.ok:
            assert end.arguments == json.loads(call.function.arguments or "{}")
        else:
            assert end.raw == call.function.arguments


# -- what a user of the events relies on --------------------------------------------------


def _event_end(data: bytes, marker: bytes) -> int:
    """Offset just past the blank line ending the SSE event that contains ``marker``."""
    return data.index(b"\n\n", data.index(marker)) + 2


@needs_shared
def test_tool_call_starts_on_the_very_bytes_that_complete_its_event() -> None:
    data = _data("openai_chat_parallel_tool_calls")
    end = _event_end(data, b'"name":"GetWeatherArgs"')
    decoder = OpenAIChatDecoder()
    assert not _of(decoder.feed(data[: end - 1]), ToolCallStart)
    assert _of(decoder.feed(data[end - 1 : end]), ToolCallStart) == [
        ToolCallStart("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs", 0)
    ]


@needs_shared
def test_parallel_calls_get_their_own_arguments_and_fields() -> None:
    events = _decode(_data("openai_chat_parallel_tool_calls"))
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd(
            "call_JMW1whyEaYG438VE1OIflxA2",
            arguments={"city": "Edinburgh", "country": "GB", "units": "c"},
        ),
        ToolCallEnd(
            "call_DNYTawLBoN8fj3KN6qU9N1Ou", arguments={"ticker": "AAPL", "exchange": "NASDAQ"}
        ),
    ]
    fields = [d.fields for d in _of(events, ToolCallDelta) if d.fields]
    assert fields == [("city",), ("country",), ("units",), ("ticker",), ("exchange",)]
    assert events[-1] == MessageEnd(
        "tool_use", Usage(input_tokens=149, output_tokens=60, reasoning_tokens=0)
    )


def test_a_split_name_starts_only_once_arguments_follow() -> None:
    chunks = [
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "get_"}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"name": "weather"}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
    ]
    decoder = OpenAIChatDecoder()
    assert decoder.feed(_body(chunks[0])) == []
    assert decoder.feed(_body(chunks[1])) == []
    assert _of(decoder.feed(_body(chunks[2])), ToolCallStart) == [
        ToolCallStart("c1", "get_weather", 0)
    ]


def test_a_name_only_fragment_starts_when_another_call_or_the_finish_arrives() -> None:
    def name_only(index: int, name: str) -> dict[str, Any]:
        return _chunk(
            {"tool_calls": [{"index": index, "id": f"c{index}", "function": {"name": name}}]}
        )

    decoder = OpenAIChatDecoder()
    assert decoder.feed(_body(name_only(0, "Read"))) == []
    assert _of(decoder.feed(_body(name_only(1, "Bash"))), ToolCallStart) == [
        ToolCallStart("c0", "Read", 0)
    ]
    finish = decoder.feed(_body(_chunk(finish="tool_calls"), "[DONE]"))
    assert finish == [
        ToolCallStart("c1", "Bash", 1),
        ToolCallEnd("c0", arguments={}),
        ToolCallEnd("c1", arguments={}),
        MessageEnd("tool_use"),
    ]


def test_name_quirks_give_whole_names_and_stable_ids() -> None:
    events = _decode(_data("openai_chat_name_quirks"))
    assert _of(events, ToolCallStart) == [
        ToolCallStart("call_own_split", "get_weather", 0),
        ToolCallStart("call_1", "get_time", 1),  # no id on the wire: minted from position
    ]
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd("call_own_split", arguments={"city": "Paris"}),
        ToolCallEnd("call_1", arguments={}),
    ]


def test_arguments_before_the_name_follow_the_start() -> None:
    events = _decode(_data("openai_chat_args_before_name"))
    assert events[0] == ToolCallStart("call_own_late", "Bash", 0)
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd("call_own_late", arguments={"command": "ls -la"})
    ]


def test_calls_without_index_are_keyed_by_id_then_the_latest() -> None:
    events = _decode(_data("openai_chat_missing_index"))
    assert _of(events, ToolCallEnd) == [
        ToolCallEnd("call_own_a", arguments={"file_path": "a.py"}),
        ToolCallEnd("call_own_b", arguments={"file_path": "b.py"}),
    ]


def test_a_new_id_at_a_reused_index_is_a_new_call() -> None:
    events = _decode(_data("openai_chat_repeated_index"))
    kinds = [(ev.type, getattr(ev, "id", None)) for ev in events if ev.type != "tool_call_delta"]
    assert kinds == [
        ("tool_call_start", "call_own_1"),
        ("tool_call_end", "call_own_1"),  # ended normally when the next id came
        ("tool_call_start", "call_own_2"),
        ("tool_call_end", "call_own_2"),
        ("message_end", None),
    ]
    assert _of(events, ToolCallEnd)[1].arguments == {"file_path": "b.py"}


def test_stop_with_open_calls_means_tool_use() -> None:
    events = _decode(_data("openai_chat_repeated_index"))
    assert all(end.ok for end in _of(events, ToolCallEnd))
    assert events[-1] == MessageEnd("tool_use", Usage(input_tokens=50, output_tokens=30))


def test_interleaved_fragments_and_a_whole_call_in_one_chunk() -> None:
    events = _decode(_data("openai_chat_interleaved"))
    assert {e.id: e.arguments for e in _of(events, ToolCallEnd)} == {
        "call_own_read": {"file_path": "a.py"},
        "call_own_bash": {"command": "ls -la", "timeout": 30},
        "call_own_glob": {"pattern": "**/*.py"},
    }
    assert [s.index for s in _of(events, ToolCallStart)] == [0, 1, 2]


def test_reasoning_text_and_usage() -> None:
    events = _decode(_data("openai_chat_reasoning_text"))
    thinking = "".join(t.text for t in _of(events, ThinkingDelta))
    assert thinking == "The user greets me in French. Answer in kind."  # not twice
    assert "".join(t.text for t in _of(events, TextDelta)) == "Bonjour ! Ça va très bien, merci 😀"
    assert events[-1] == MessageEnd(
        "end_turn",
        Usage(input_tokens=31, output_tokens=24, cache_read_tokens=16, reasoning_tokens=11),
    )


def test_refusal_is_text_and_the_stop_reason() -> None:
    events = _decode(_data("openai_chat_refusal"))
    assert events == [
        TextDelta("I'm sorry, "),
        TextDelta("I can't help with that."),
        MessageEnd("refusal"),
    ]


def test_length_keeps_whole_calls_and_fails_the_cut_one() -> None:
    events = _decode(_data("openai_chat_length"))
    ok, cut = _of(events, ToolCallEnd)
    assert ok == ToolCallEnd("call_own_ok", arguments={"file_path": "a.py"})
    assert not cut.ok
    assert "max_tokens" in (cut.error or "")
    assert cut.raw == '{"file_path": "b.py", "content": "line one\\nli'
    assert isinstance(events[-1], MessageEnd)
    assert events[-1].stop_reason == "max_tokens"


def test_error_payload_fails_the_open_call() -> None:
    events = _decode(_data("openai_chat_error"))
    assert [ev.type for ev in events[-3:]] == ["tool_call_end", "stream_error", "message_end"]
    end, error, message_end = events[-3:]
    assert isinstance(end, ToolCallEnd)
    assert end.raw == '{"command": "make'
    assert isinstance(error, StreamError)
    assert error.message == "The server had an error while processing your request."
    assert message_end == MessageEnd("error")


def test_finish_without_done_ends_at_close() -> None:
    decoder = OpenAIChatDecoder()
    events = decoder.feed(_data("openai_chat_no_done"))
    assert events == [TextDelta("Short answer.")]
    assert decoder.close() == [MessageEnd("end_turn")]


def test_done_without_finish_reason_still_ends_the_calls() -> None:
    call = {"index": 0, "id": "c0", "function": {"name": "Read", "arguments": '{"file_path": "x"}'}}
    events = _decode(_body(_chunk({"tool_calls": [call]}), "[DONE]"))
    assert events[-2:] == [ToolCallEnd("c0", arguments={"file_path": "x"}), MessageEnd("tool_use")]


@needs_shared
def test_body_cut_mid_arguments_fails_the_calls() -> None:
    data = _data("openai_chat_parallel_tool_calls")
    events = _decode(data[: _event_end(data, b'"arguments":"cker\\""')])
    check_invariants(events)
    why = "the stream ended before the response did"
    assert events[-4:] == [
        ToolCallEnd(
            "call_JMW1whyEaYG438VE1OIflxA2",
            error=f"the stream failed: {why}",
            raw='{"city": "Edinburgh", "country": "GB", "units": "c"}',
        ),
        ToolCallEnd(
            "call_DNYTawLBoN8fj3KN6qU9N1Ou", error=f"the stream failed: {why}", raw='{"ticker"'
        ),
        StreamError(why),
        MessageEnd("error"),
    ]


def test_every_prefix_of_a_stream_still_keeps_the_invariants() -> None:
    data = _data("openai_chat_interleaved")
    for n in range(len(data) + 1):
        check_invariants(_decode(data[:n]))


def test_nothing_after_done_counts() -> None:
    data = _data("openai_chat_no_done") + b"data: [DONE]\n\n" + _body(_chunk({"content": "late"}))
    assert _of(_decode(data), TextDelta) == [TextDelta("Short answer.")]


# -- broken input never raises ------------------------------------------------------------

_FRAGMENT = st.fixed_dictionaries(
    {},
    optional={
        "index": st.sampled_from([0, 1, None, "0"]),
        "id": st.sampled_from([None, "", "a", "b"]),
        "function": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from([None, "", "get_", "weather", "Read"]),
                "arguments": st.sampled_from([None, "", "{", "}", '"k"', ": 1", '{"a": 1}']),
            },
        )
        | st.none(),
    },
)
_DELTA = st.fixed_dictionaries(
    {},
    optional={
        "content": st.sampled_from([None, "", "hi"]),
        "reasoning": st.sampled_from([None, "hm"]),
        "refusal": st.sampled_from([None, "no"]),
        "tool_calls": st.lists(_FRAGMENT | st.none(), max_size=3) | st.none(),
    },
)
_CHOICE = st.fixed_dictionaries(
    {
        "index": st.sampled_from([0, 0, 1]),
        "delta": _DELTA | st.none(),
        "finish_reason": st.sampled_from([None, None, "stop", "length", "tool_calls", "x"]),
    }
)
_PAYLOAD = st.fixed_dictionaries(
    {"choices": st.lists(_CHOICE, max_size=2) | st.none()},
    optional={"usage": st.sampled_from([None, {"prompt_tokens": 1}, "x"])},
)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(
        _PAYLOAD
        | st.just("[DONE]")
        | st.just("not json")
        | st.just({"error": {"message": "boom"}})
        | st.just({"error": "boom"}),
        max_size=12,
    )
)
def test_malformed_streams_never_raise_and_keep_the_invariants(
    items: list[dict[str, Any] | str],
) -> None:
    ways = decode_ways(OpenAIChatDecoder, _body(*items))
    assert ways["bytewise"] == ways["whole"]
    check_invariants(ways["whole"])


@needs_shared
def test_payloads_fed_without_sse_framing_decode_the_same() -> None:
    data = _data("openai_chat_parallel_tool_calls")
    decoder = OpenAIChatDecoder()
    events: list[Event] = []
    for sse in SDKSSEDecoder().iter_bytes(iter([data])):
        if not sse.data.startswith("[DONE]"):
            events += decoder.feed_payload(json.loads(sse.data))
    events += decoder.close()  # no [DONE] this way: the finish_reason seen ends the message
    assert events == _decode(data)


def test_an_error_event_keeps_its_code_in_the_message() -> None:
    # Groq's tool_use_failed: the code says what happened, the message only how.
    body = (
        b'event: error\ndata: {"error":{"message":"Tool call validation failed",'
        b'"type":"invalid_request_error","code":"tool_use_failed"}}\n\n'
    )
    errors = [ev for ev in _decode(body) if isinstance(ev, StreamError)]
    assert errors[0].message == "tool_use_failed: Tool call validation failed"

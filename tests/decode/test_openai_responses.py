"""OpenAIResponsesDecoder: recorded and hand-written Responses API streams, in any chunking.

Every stream is decoded whole, byte by byte and at random split points (the events must
be identical), checked against the invariants of docs/design.md and a reviewed snapshot; final
arguments are compared with what the official SDK's ``ResponseStreamState`` accumulates
from the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai import omit

# Private on purpose, no public equivalent: the SDK's SSE decoder, and the lenient model
# construction its stream uses for each event; the SDK is pinned exactly in the dev
# dependencies.
from openai._models import construct_type
from openai._streaming import SSEDecoder as SDKSSEDecoder
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import ResponseStreamEvent

from tests.decode.contract import chunking_contract
from tests.helpers import (
    FIXTURES,
    RECORDED,
    check_invariants,
    feed_pieces,
    needs_shared,
    read_stream,
)
from toolwire.decode.openai_responses import OpenAIResponsesDecoder
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

THIRD_PARTY = RECORDED / "openai_responses_function_call.jsonl"


def _frame(payloads: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _recorded() -> bytes:
    # Payload lines kept byte for byte; the fixture is the `data:` content only.
    lines = read_stream(THIRD_PARTY).decode("utf-8").splitlines()
    return b"".join(
        f"event: {json.loads(line)['type']}\ndata: {line}\n\n".encode() for line in lines
    )


STREAMS: dict[str, Path | None] = {
    "openai_responses_function_call": None,
    **{p.stem: p for p in sorted(FIXTURES.glob("openai_responses_*.sse"))},
}


def _data(name: str) -> bytes:
    path = STREAMS[name]
    return _recorded() if path is None else read_stream(path)


def _decode(data: bytes) -> list[Event]:
    return feed_pieces(OpenAIResponsesDecoder(), [data])


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [ev for ev in events if isinstance(ev, kind)]


def _args_text(events: list[Event], call_id: str) -> str:
    return "".join(ev.text for ev in _of(events, ToolCallDelta) if ev.id == call_id)


def _ends(events: list[Event]) -> dict[str, ToolCallEnd]:
    return {ev.id: ev for ev in _of(events, ToolCallEnd)}


# -- every stream, every chunking ---------------------------------------------------------


def test_there_are_hand_written_streams() -> None:
    assert len(STREAMS) >= 8


(
    test_whole_and_bytewise_give_the_same_valid_events,
    test_any_split_gives_the_same_events,
    test_events_match_the_reviewed_snapshot,
    test_other_line_endings_decode_the_same,
    test_a_stream_cut_anywhere_still_closes_every_call,
) = chunking_contract(OpenAIResponsesDecoder, _data, STREAMS, [(b"\n", b"\r\n")])


# -- the official SDK as oracle -------------------------------------------------------------


def _sdk_final_arguments(data: bytes) -> dict[str, str]:
    """call_id -> argument text (``input`` for custom tools) the SDK ends up with."""
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    final: dict[str, str] = {}
    for sse in SDKSSEDecoder().iter_bytes(iter([data])):
        event: Any = construct_type(type_=ResponseStreamEvent, value=json.loads(sse.data))
        for out in state.handle_event(event):
            if out.type == "response.completed":
                for item in out.response.output:
                    if item.type == "function_call":
                        final[item.call_id] = item.arguments
                    elif item.type == "custom_tool_call":
                        final[item.call_id] = item.input
    return final


@pytest.mark.parametrize(
    "name",
    [
        "openai_responses_function_call",
        "openai_responses_parallel_reasoning",
        "openai_responses_custom_tool",
        "openai_responses_done_only",
    ],
)
def test_arguments_match_the_openai_sdk(name: str) -> None:
    data = _data(name)
    expected = _sdk_final_arguments(data)
    events = _decode(data)
    ends = _ends(events)
    assert expected
    assert set(ends) == set(expected)
    for call_id, text in expected.items():
        assert ends[call_id].ok
        assert _args_text(events, call_id) == text  # the deltas add up to the final text
        if name == "openai_responses_custom_tool":
            assert ends[call_id].arguments == {"input": text}
        else:
            assert ends[call_id].arguments == json.loads(text)


@needs_shared
def test_recorded_deltas_equal_the_sdk_accumulation() -> None:
    """Where no done event had to fill a gap, the deltas are exactly what the SDK summed."""
    data = _recorded()
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    snapshot = ""
    for sse in SDKSSEDecoder().iter_bytes(iter([data])):
        event: Any = construct_type(type_=ResponseStreamEvent, value=json.loads(sse.data))
        for out in state.handle_event(event):
            if out.type == "response.function_call_arguments.delta":
                snapshot = out.snapshot
    assert _args_text(_decode(data), "call_Q7pq6EfVGRnauPLWSSYBGJ1l") == snapshot


# -- what a user sees -----------------------------------------------------------------------


@needs_shared
def test_recorded_call_is_named_early_and_fields_complete_before_the_end() -> None:
    events = _decode(_recorded())
    start = _of(events, ToolCallStart)[0]
    assert (start.id, start.name, start.index) == (
        "call_Q7pq6EfVGRnauPLWSSYBGJ1l",
        "get_weather",
        0,
    )
    assert events[0] == start  # before any argument byte
    fields = [f for ev in _of(events, ToolCallDelta) for f in ev.fields]
    assert fields == ["location", "unit"]
    assert events[-1] == MessageEnd(
        "tool_use",
        Usage(input_tokens=467, output_tokens=26, cache_read_tokens=0, reasoning_tokens=0),
    )


@needs_shared
def test_start_comes_on_the_byte_that_completes_the_added_event() -> None:
    data = _recorded()
    begin = data.index(b"event: response.output_item.added")
    end = data.index(b"\n\n", begin) + 2
    decoder = OpenAIResponsesDecoder()
    assert not _of(decoder.feed(data[: end - 1]), ToolCallStart)
    started = _of(decoder.feed(data[end - 1 : end]), ToolCallStart)
    assert [s.name for s in started] == ["get_weather"]


def test_parallel_calls_reasoning_and_text() -> None:
    events = _decode(_data("openai_responses_parallel_reasoning"))
    thinking = "".join(ev.text for ev in _of(events, ThinkingDelta))
    assert thinking == "**Planning the reads**\n\nBoth files are needed."
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "Reading both files."
    starts = _of(events, ToolCallStart)
    assert [(s.id, s.index) for s in starts] == [("call_own_a", 0), ("call_own_b", 1)]
    ends = _ends(events)
    assert ends["call_own_a"].arguments == {"file_path": "src/app.py", "limit": 200}
    assert ends["call_own_b"].arguments == {"file_path": 'docs/ünïcode "q".md'}
    assert events[-1] == MessageEnd(
        "tool_use",
        Usage(input_tokens=1200, output_tokens=90, cache_read_tokens=1024, reasoning_tokens=40),
    )
    assert not _of(events, StreamError)  # the unknown event type said nothing


def test_a_delta_with_only_an_output_index_reaches_its_call() -> None:
    events = _decode(_data("openai_responses_parallel_reasoning"))
    assert _args_text(events, "call_own_b") == '{"file_path":"docs/ünïcode \\"q\\".md"}'


def test_custom_tool_input_is_raw_text() -> None:
    events = _decode(_data("openai_responses_custom_tool"))
    patch = _ends(events)["call_own_patch"].arguments["input"]
    assert patch.startswith("*** Begin Patch\n")
    assert patch.endswith("*** End Patch")
    assert _args_text(events, "call_own_patch") == patch


def test_replayed_events_are_dropped_but_equal_deltas_are_kept() -> None:
    events = _decode(_data("openai_responses_duplicates"))
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "a =="
    assert len(_of(events, ToolCallStart)) == 1
    assert _args_text(events, "call_own_g") == '{"pattern":"=="}'
    assert _ends(events)["call_own_g"].arguments == {"pattern": "=="}


def test_done_events_fill_in_missing_argument_text() -> None:
    events = _decode(_data("openai_responses_done_only"))
    ends = _ends(events)
    assert ends["call_own_1"].arguments == {"pattern": "**/*.py"}
    assert ends["call_own_2"].arguments == {"file_path": "README.md"}
    # Only the missing suffix is sent: the deltas still add up to the arguments.
    assert [ev.text for ev in _of(events, ToolCallDelta) if ev.id == "call_own_2"] == [
        '{"file_path":',
        '"README.md"}',
    ]
    # A call seen only when complete is still announced, streamed once and ended.
    assert [s.name for s in _of(events, ToolCallStart)] == ["Glob", "Read", "Bash"]
    assert ends["call_own_3"].arguments == {"command": "ls"}
    assert not _of(events, StreamError)


def test_final_arguments_that_contradict_the_deltas_win_and_are_reported() -> None:
    item = {"id": "fc_x", "type": "function_call", "call_id": "call_x", "name": "Read"}
    events = _decode(
        _frame(
            [
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": "fc_x",
                    "output_index": 0,
                    "delta": '{"file_path":"a.py"}',
                },
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": "fc_x",
                    "output_index": 0,
                    "arguments": '{"file_path":"b.py"}',
                },
                {"type": "response.completed", "response": {"usage": None}},
            ]
        )
    )
    check_invariants(events)
    assert _of(events, StreamError)[0].raw == '{"file_path":"b.py"}'
    assert _ends(events)["call_x"].arguments == {"file_path": "b.py"}


def test_failed_response_fails_the_open_call_with_the_provider_message() -> None:
    events = _decode(_data("openai_responses_failed"))
    end = _ends(events)["call_own_bash"]
    assert not end.ok
    assert end.raw == '{"command":"pytest -q'
    (error,) = _of(events, StreamError)
    assert "The server had an error" in error.message
    assert "server_error" in error.message
    assert events[-1] == MessageEnd("error")


def test_error_event_keeps_the_text_and_reports_the_message() -> None:
    events = _decode(_data("openai_responses_error_event"))
    assert _of(events, TextDelta) == [TextDelta("Let me check")]
    assert "Rate limit reached" in _of(events, StreamError)[0].message
    assert events[-1] == MessageEnd("error")


def test_max_output_tokens_cuts_the_call_and_ends_max_tokens() -> None:
    events = _decode(_data("openai_responses_incomplete"))
    end = _ends(events)["call_own_w"]
    assert not end.ok
    assert end.raw == '{"file_path":"notes.md","content":"# Notes\\n\\nThe first'
    assert events[-1] == MessageEnd("max_tokens", Usage(input_tokens=10, output_tokens=16))


def test_content_filter_and_refusal_end_as_refusal() -> None:
    filtered = {
        "type": "response.incomplete",
        "response": {"incomplete_details": {"reason": "content_filter"}},
    }
    assert _decode(_frame([filtered]))[-1] == MessageEnd("refusal")
    refusal = {
        "type": "response.refusal.delta",
        "item_id": "m",
        "output_index": 0,
        "content_index": 0,
        "delta": "I can't help with that.",
    }
    events = _decode(_frame([refusal, {"type": "response.completed", "response": {}}]))
    assert events == [TextDelta("I can't help with that."), MessageEnd("refusal")]


def test_reasoning_text_parts_are_separated() -> None:
    def raw(index: int, delta: str) -> dict[str, Any]:
        return {
            "type": "response.reasoning_text.delta",
            "item_id": "rs",
            "output_index": 0,
            "content_index": index,
            "delta": delta,
        }

    events = _decode(_frame([raw(0, "one"), raw(0, " two"), raw(1, "three")]))
    assert "".join(ev.text for ev in _of(events, ThinkingDelta)) == "one two\n\nthree"


@needs_shared
def test_a_body_cut_before_the_terminal_event_fails_the_open_call() -> None:
    data = _recorded()
    cut = data.index(b"event: response.function_call_arguments.done")
    events = _decode(data[:cut])
    check_invariants(events)
    end = _ends(events)["call_Q7pq6EfVGRnauPLWSSYBGJ1l"]
    assert not end.ok
    assert end.raw == '{"location":"San Francisco, CA","unit":"fahrenheit"}'
    assert isinstance(events[-2], StreamError)
    assert events[-1] == MessageEnd("error")


def test_a_server_that_repeats_one_sequence_number_loses_nothing() -> None:
    def text(delta: str) -> dict[str, Any]:
        return {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": delta,
            "sequence_number": 0,
        }

    completed = {"type": "response.completed", "response": {}, "sequence_number": 0}
    events = _decode(_frame([text("a"), text("b"), text("b"), completed]))
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "abb"
    assert events[-1] == MessageEnd("end_turn")


def test_server_run_items_are_marked_server_calls_and_keep_the_stop_reason() -> None:
    """A web_search_call is the provider's own call: shown, with its item as the result,
    never a client call; a response with only such calls ends end_turn, as Anthropic's
    server_tool_use does."""
    item = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    done = {**item, "status": "completed", "action": {"type": "search", "query": "acp"}}
    events = _decode(
        _frame(
            [
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                {"type": "response.output_text.delta", "output_index": 1, "delta": "ok"},
                {"type": "response.completed", "response": {"output": [done]}},
            ]
        )
    )
    assert _of(events, ToolCallStart) == [ToolCallStart("ws_1", "web_search", 0, server=True)]
    (end,) = _of(events, ToolCallEnd)
    assert end.arguments == {}
    assert end.result == {"status": "completed", "action": {"type": "search", "query": "acp"}}
    assert events[-1] == MessageEnd("end_turn")

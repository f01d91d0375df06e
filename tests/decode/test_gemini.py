"""GeminiDecoder: recorded and hand-written Gemini / Vertex streams, in any chunking.

Every stream is decoded whole, byte by byte and at random split points (the events must
be identical), checked against the event invariants (docs/decoding.md) and a reviewed
snapshot. Vertex streamed arguments are checked against an independent reconstruction from the
path-addressed fragments, and against generated argument objects.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.contract import chunking_contract
from tests.helpers import (
    FIXTURES,
    RECORDED,
    check_invariants,
    cut_points,
    decode_ways,
    feed_pieces,
    needs_shared,
    read_stream,
    split_at,
)
from toolwire.decode.gemini import GeminiDecoder
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

THIRD_PARTY = {
    "gemini_function_call": RECORDED / "gemini_function_call.jsonl",
    "vertex_stream_function_call_partial_args": (
        RECORDED / "vertex_stream_function_call_partial_args.jsonl"
    ),
}
STREAMS: dict[str, Path] = {
    **THIRD_PARTY,
    **{p.stem: p for p in sorted(FIXTURES.glob("gemini_*.sse"))},
    **{p.stem: p for p in sorted(FIXTURES.glob("vertex_*.sse"))},
}


def _lines(name: str) -> list[str]:
    """The chunk payloads of a stream, one JSON text each."""
    # Split on line ends only: str.splitlines would also split at U+2028 in the JSON.
    lines = read_stream(STREAMS[name]).decode("utf-8").replace("\r\n", "\n").split("\n")
    if name in THIRD_PARTY:
        return [line for line in lines if line]
    return [line[len("data: ") :] for line in lines if line.startswith("data: ")]


def _sse(chunks: list[str]) -> bytes:
    # Gemini's SSE ends events with CRLF pairs, as its API sends them.
    return b"".join(f"data: {c}\r\n\r\n".encode() for c in chunks)


def _data(name: str) -> bytes:
    if name in THIRD_PARTY:
        return _sse(_lines(name))
    return read_stream(STREAMS[name])


def _decode(data: bytes) -> list[Event]:
    return feed_pieces(GeminiDecoder(), [data])


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [ev for ev in events if isinstance(ev, kind)]


def _args_text(events: list[Event], call_id: str) -> str:
    return "".join(ev.text for ev in _of(events, ToolCallDelta) if ev.id == call_id)


def _ends(events: list[Event]) -> dict[str, ToolCallEnd]:
    return {ev.id: ev for ev in _of(events, ToolCallEnd)}


# -- every stream, every chunking ---------------------------------------------------------


(
    test_whole_and_bytewise_give_the_same_valid_events,
    test_any_split_gives_the_same_events,
    test_events_match_the_reviewed_snapshot,
    test_other_line_endings_decode_the_same,
    test_a_stream_cut_anywhere_still_closes_every_call,
) = chunking_contract(GeminiDecoder, _data, STREAMS, [(b"\r\n", b"\n")])


# -- the JSON array form (no alt=sse) -------------------------------------------------------


def _array(name: str, lead: bytes = b"") -> bytes:
    return lead + b"[" + b",\r\n".join(line.encode() for line in _lines(name)) + b"]"


@pytest.mark.parametrize("name", STREAMS)
def test_json_array_body_decodes_like_sse(name: str) -> None:
    ways = decode_ways(GeminiDecoder, _array(name, lead=b"\r\n "))
    assert ways["whole"] == ways["bytewise"] == _decode(_data(name))


@needs_shared
@settings(max_examples=30, deadline=None)
@given(draw=st.data())
def test_json_array_any_split_gives_the_same_events(draw: st.DataObject) -> None:
    body = _array("vertex_stream_function_call_partial_args")
    cuts = draw.draw(cut_points(len(body)))
    assert feed_pieces(GeminiDecoder(), split_at(body, cuts)) == _decode(body)


def test_json_array_braces_and_escapes_inside_strings_do_not_end_an_object() -> None:
    tricky = 'close } open { quote \\" backslash \\\\ "}]'
    chunks = [
        {"candidates": [{"content": {"parts": [{"text": tricky}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "é"}]}, "finishReason": "STOP"}]},
    ]
    body = ("[" + ",".join(json.dumps(c, ensure_ascii=False) for c in chunks) + "]").encode()
    ways = decode_ways(GeminiDecoder, body)
    assert ways["whole"] == ways["bytewise"]
    assert ways["whole"] == [TextDelta(tricky), TextDelta("é"), MessageEnd("end_turn")]


@needs_shared
def test_json_array_cut_inside_an_object_is_reported() -> None:
    body = _array("gemini_function_call")
    events = _decode(body[: body.index(b'"finishReason"')])
    check_invariants(events)
    errors = _of(events, StreamError)
    assert errors[0].message == "the stream ended inside a JSON object"
    assert events[-1] == MessageEnd("error")


# -- recorded Gemini API call -----------------------------------------------------------------


@needs_shared
def test_whole_call_keeps_its_signature_and_gets_a_stable_id() -> None:
    events = _decode(_data("gemini_function_call"))
    (start,) = _of(events, ToolCallStart)
    assert start.name == "weather"
    assert start.id == "gemini-b36LacjwM668nsEP2tbsgQQ-0"  # minted: the call has no id
    assert start.signature is not None
    assert start.signature.startswith("EqUCCqICAb4")
    (delta,) = _of(events, ToolCallDelta)
    assert delta.fields == ("location",)
    assert json.loads(delta.text) == {"location": "San Francisco"}
    assert _ends(events)[start.id].arguments == {"location": "San Francisco"}
    # STOP, but the response made a call; thoughts count as output tokens.
    assert events[-1] == MessageEnd(
        "tool_use", Usage(input_tokens=29, output_tokens=60, reasoning_tokens=45)
    )


@needs_shared
def test_start_comes_on_the_byte_that_completes_the_chunk() -> None:
    data = _data("gemini_function_call")
    end = data.index(b"\r\n\r\n") + 4
    decoder = GeminiDecoder()
    assert decoder.feed(data[: end - 2]) == []
    # A CR ends a line (WHATWG): the blank line is complete before its LF arrives.
    assert [type(ev) for ev in decoder.feed(data[end - 2 : end - 1])] == [
        ToolCallStart,
        ToolCallDelta,
        ToolCallEnd,
    ]
    assert decoder.feed(data[end - 1 :]) == []


@needs_shared
def test_message_ends_only_when_the_body_closes() -> None:
    decoder = GeminiDecoder()
    events = decoder.feed(_data("gemini_function_call"))
    assert not _of(events, MessageEnd)  # a later chunk could still carry usage
    assert _of(decoder.close(), MessageEnd)


# -- hand-written Gemini streams --------------------------------------------------------------


def test_thoughts_signatures_and_text() -> None:
    events = _decode(_data("gemini_thinking_text"))
    thinking = _of(events, ThinkingDelta)
    assert thinking[0].text.startswith("**Looking at the question**")
    assert [t.signature for t in thinking if t.signature] == [
        "c2lnLW93bi10aG91Z2h0",
        "c2lnLW93bi10ZXh0",
    ]
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "Hello, wörld 👋"
    assert events[-1] == MessageEnd(
        "end_turn",
        Usage(input_tokens=120, output_tokens=47, cache_read_tokens=96, reasoning_tokens=33),
    )


def test_parallel_function_call_parts() -> None:
    events = _decode(_data("gemini_parallel_calls"))
    starts = _of(events, ToolCallStart)
    assert [(s.id, s.name, s.index) for s in starts] == [
        ("gemini-own_resp_1-0", "Read", 0),
        ("own-call-2", "Read", 1),
        ("gemini-own_resp_1-2", "TodoWrite", 2),
    ]
    assert [s.signature for s in starts] == ["c2lnLW93bi1jYWxs", None, None]
    ends = _ends(events)
    assert ends["own-call-2"].arguments == {"file_path": 'docs/a "b".md', "limit": 50}
    assert ends["gemini-own_resp_1-2"].arguments == {}
    assert events[-1].type == "message_end"
    assert events[-1].stop_reason == "tool_use"


def test_max_tokens() -> None:
    events = _decode(_data("gemini_max_tokens"))
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "The answer is long and"
    assert events[-1] == MessageEnd("max_tokens", Usage(input_tokens=120, output_tokens=8))


def test_malformed_function_call_is_an_error_with_the_provider_message() -> None:
    events = _decode(_data("gemini_malformed_call"))
    (error,) = _of(events, StreamError)
    assert "MALFORMED_FUNCTION_CALL" in error.message
    assert "default_api.Read(file_path=)" in error.message
    assert events[-1] == MessageEnd("error")


def test_error_payload_keeps_the_text() -> None:
    events = _decode(_data("gemini_error"))
    assert events[0] == TextDelta("Let me")
    assert _of(events, StreamError)[0].message == (
        "The model is overloaded. Please try again later."
    )
    assert events[-1] == MessageEnd("error")


def test_a_body_without_finish_reason_was_cut() -> None:
    events = _decode(_data("gemini_cut"))
    assert "".join(ev.text for ev in _of(events, TextDelta)) == "Partial answer"
    assert _of(events, StreamError)[0].message == "the stream ended before the response did"
    assert events[-1] == MessageEnd("error")


@pytest.mark.parametrize("finish", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "SPII"])
def test_safety_finish_reasons_are_refusals(finish: str) -> None:
    chunk = {"candidates": [{"content": {"parts": [{"text": "I"}]}, "finishReason": finish}]}
    assert _decode(_sse([json.dumps(chunk)]))[-1] == MessageEnd("refusal")


def test_a_blocked_prompt_is_a_refusal() -> None:
    chunk = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}
    assert _decode(_sse([json.dumps(chunk)])) == [MessageEnd("refusal")]


def test_a_chunk_without_counts_does_not_erase_usage() -> None:
    counted = {
        "candidates": [{"content": {"parts": [{"text": "a"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1},
    }
    bare = {"candidates": [{"finishReason": "STOP"}], "usageMetadata": {"trafficType": "X"}}
    events = _decode(_sse([json.dumps(counted), json.dumps(bare)]))
    assert events[-1] == MessageEnd("end_turn", Usage(input_tokens=5, output_tokens=1))


# -- Vertex streamed arguments ------------------------------------------------------------------

_PATH_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]")


def _reconstruct(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The arguments built straight from the fragments: every string fragment at a path
    appended, other values set; then each path's value placed into nested containers."""
    values: dict[str, Any] = {}
    for entry in entries:
        path = entry["jsonPath"]
        if "stringValue" in entry:
            values[path] = values.get(path, "") + entry["stringValue"]
        elif "numberValue" in entry:
            values[path] = entry["numberValue"]
        elif "boolValue" in entry:
            values[path] = entry["boolValue"]
        else:
            values[path] = None
    root: dict[str, Any] = {}
    for path, value in values.items():
        keys: list[Any] = []
        for name, index, quoted in _PATH_TOKEN.findall(path[1:]):
            keys.append(int(index) if index else (name or re.sub(r"\\(.)", r"\1", quoted)))
        node: Any = root
        for key, after in zip(keys, [*keys[1:], None], strict=True):
            if isinstance(key, int):
                while len(node) <= key:
                    node.append(None)
            if after is None:
                node[key] = value
            else:
                if (node[key] if isinstance(key, int) else node.get(key)) is None:
                    node[key] = [] if isinstance(after, int) else {}
                node = node[key]
    return root


def _partial_args(lines: list[str]) -> list[dict[str, Any]]:
    entries = []
    for line in lines:
        for cand in json.loads(line).get("candidates", []):
            for part in cand.get("content", {}).get("parts", []):
                entries.extend(part.get("functionCall", {}).get("partialArgs", []))
    return entries


@pytest.mark.parametrize(
    "name", ["vertex_stream_function_call_partial_args", "vertex_out_of_order"]
)
def test_streamed_arguments_equal_an_independent_reconstruction(name: str) -> None:
    lines = _lines(name)
    events = _decode(_data(name))
    (end,) = _of(events, ToolCallEnd)
    expected = _reconstruct(_partial_args(lines))
    assert end.arguments == expected
    assert json.loads(_args_text(events, end.id)) == expected


@needs_shared
def test_recorded_vertex_arguments_stream_as_a_json_prefix() -> None:
    events = _decode(_data("vertex_stream_function_call_partial_args"))
    start = events[0]
    assert isinstance(start, ToolCallStart)
    assert start.name == "cookRecipe"
    assert start.signature is not None
    deltas = _of(events, ToolCallDelta)
    assert deltas[0].text == '{"recipe":{"ingredients":[{"amount":"16 oz'
    text = _args_text(events, start.id)
    # In document order the text is the compact JSON of the arguments, written once.
    assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    assert [f for d in deltas for f in d.fields] == ["recipe"]


@needs_shared
def test_the_name_arrives_before_any_argument() -> None:
    data = _data("vertex_stream_function_call_partial_args")
    decoder = GeminiDecoder()
    first = decoder.feed(data[: data.index(b"\r\n\r\n") + 4])
    assert [type(ev) for ev in first] == [ToolCallStart]


def test_out_of_order_paths_still_stream_what_they_can() -> None:
    events = _decode(_data("vertex_out_of_order"))
    deltas = [d.text for d in _of(events, ToolCallDelta)]
    # Everything up to the path that went back streamed as it came...
    assert deltas[0] == '{"file_path":"src/app.py"'
    # ...and the remainder came at the end, as whole values.
    assert deltas[-1].startswith('}],"edits":[{"old":"print(\\"hi\\")"')
    assert _ends(events)["gemini-own_resp_1-0"].arguments["edits"][0]["new"] == 'print("hello")'


def test_streamed_arguments_cut_by_max_tokens_fail_with_the_text_so_far() -> None:
    events = _decode(_data("vertex_cut_by_max_tokens"))
    (end,) = _of(events, ToolCallEnd)
    assert not end.ok
    assert end.raw == '{"file_path":"notes.md","content":"# Notes\\n\\nThe first line'
    assert events[-1] == MessageEnd("max_tokens", Usage(input_tokens=40, output_tokens=64))


def test_an_unreadable_path_fails_only_that_call() -> None:
    bad = {"jsonPath": "items[0]", "stringValue": "x"}  # no "$": not a path from the root
    parts: list[list[dict[str, Any]]] = [
        [{"functionCall": {"name": "A", "willContinue": True}}],
        [{"functionCall": {"partialArgs": [bad], "willContinue": True}}],
        [{"functionCall": {}}, {"text": "done"}],
    ]
    chunks: list[dict[str, Any]] = [{"candidates": [{"content": {"parts": p}}]} for p in parts]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    events = _decode(_sse([json.dumps(c) for c in chunks]))
    check_invariants(events)
    (end,) = _of(events, ToolCallEnd)
    assert end.error is not None
    assert "jsonPath" in end.error
    assert _of(events, TextDelta) == [TextDelta("done")]


# Generated arguments: any object (without empty containers, which paths cannot express),
# streamed as Vertex does, must come out equal, and in document order as its exact JSON.
_KEYS = st.text(alphabet="ab_.'\" [é\\", max_size=4)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='ab "\\\n\t\x01é😀\u2028', max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=12,
)
_ARGS = st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4)


def _path(keys: list[Any]) -> str:
    out = "$"
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        elif re.fullmatch(r"[A-Za-z_]\w*", key):
            out += "." + key
        else:
            out += "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"
    return out


def _leaves(value: Any, keys: list[Any]) -> list[tuple[list[Any], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, [*keys, k])]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, [*keys, i])]
    return [(keys, value)]


def _fragments(draw: st.DrawFn, keys: list[Any], value: Any) -> list[dict[str, Any]]:
    path = _path(keys)
    if isinstance(value, bool):
        return [{"jsonPath": path, "boolValue": value}]
    if isinstance(value, int | float):
        return [{"jsonPath": path, "numberValue": value}]
    if value is None:
        return [{"jsonPath": path, "nullValue": None}]
    pieces = split_at(value, draw(st.lists(st.integers(1, 12), max_size=3)))
    entries = [{"jsonPath": path, "stringValue": p, "willContinue": True} for p in pieces]
    if draw(st.booleans()) and entries:
        del entries[-1]["willContinue"]  # the last piece ends the path itself
    else:
        entries.append({"jsonPath": path, "stringValue": ""})
    return entries


@st.composite
def _vertex_body(draw: st.DrawFn, shuffle: bool) -> tuple[dict[str, Any], bytes]:
    args = draw(_ARGS)
    leaves = _leaves(args, [])
    if shuffle:
        leaves = draw(st.permutations(leaves))
    entries = [e for keys, value in leaves for e in _fragments(draw, keys, value)]
    parts: list[dict[str, Any]] = [{"functionCall": {"name": "Tool", "willContinue": True}}]
    while entries:
        n = draw(st.integers(1, 3))
        parts.append({"functionCall": {"partialArgs": entries[:n], "willContinue": True}})
        del entries[:n]
        if draw(st.booleans()):
            parts.append({"functionCall": {"willContinue": True}})
    parts.append({"functionCall": {}})
    chunks: list[dict[str, Any]] = [{"candidates": [{"content": {"parts": [p]}}]} for p in parts]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return args, _sse([json.dumps(c) for c in chunks])


@settings(max_examples=150, deadline=None)
@given(case=_vertex_body(shuffle=False))
def test_generated_arguments_in_document_order_stream_as_their_json(
    case: tuple[dict[str, Any], bytes],
) -> None:
    args, body = case
    events = _decode(body)
    check_invariants(events)
    (end,) = _of(events, ToolCallEnd)
    assert end.arguments == args
    assert _args_text(events, end.id) == json.dumps(args, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=150, deadline=None)
@given(case=_vertex_body(shuffle=True))
def test_generated_arguments_in_any_leaf_order_come_out_equal(
    case: tuple[dict[str, Any], bytes],
) -> None:
    args, body = case
    events = _decode(body)
    check_invariants(events)
    (end,) = _of(events, ToolCallEnd)
    assert end.arguments == args
    assert json.loads(_args_text(events, end.id)) == args

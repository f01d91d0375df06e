"""Qwen3-Coder XML tool calls: ``<tool_call><function=NAME><parameter=KEY>...``."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    assert_no_markup_leak,
    assert_same_in_any_chunking,
    calls_of,
    chunks,
    decode_split,
    decode_whole,
    deltas_text,
    ends_of,
    errors_of,
    field_values,
    fields_of,
    merge_adjacent,
    start_chunk,
    text_of,
)
from tests.helpers import cut_points
from toolwire.decode.tags import Qwen3CoderDecoder
from toolwire.events import TextDelta, ToolCallDelta, ToolCallEnd

FILE_CONTENT = "if a < b && c > \"d\":\n    print('héllo wörld 😀')\n"
WRITE = (
    "I'll write it.\n\n<tool_call>\n<function=Write>\n"
    "<parameter=file_path>\nsrc/app.py\n</parameter>\n"
    f"<parameter=content>\n{FILE_CONTENT}\n</parameter>\n"
    "</function>\n</tool_call>\nDone."
)
SCHEMAS: dict[str, dict[str, Any]] = {
    "Read": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "offset": {"type": "integer"},
            "limit": {"type": ["integer", "null"]},
        },
    },
    "Config": {
        "type": "object",
        "properties": {
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean"},
            "opts": {"type": "object"},
            "tags": {"type": "array"},
            "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
            "port": {"type": "integer"},
            "maybe": {"type": ["string", "null"]},
        },
    },
}
BACK_TO_BACK = (
    "Both:\n<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n"
    "<parameter=offset>\n10\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
    "<function=Read>\n<parameter=file_path>\nb.py\n</parameter>\n</function>\n"
    "<function=Bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call> end"
)
SAMPLES = [WRITE, BACK_TO_BACK]
# Broken or cut-off markup: the events must not depend on the chunking either.
ODD = [
    '<tool_call>\n<function=get_weather>{"city": "Paris"}</function>\n</tool_call>ok',
    'Calling <function=get_weather>{"city": "Paris"}</function>',
    'a<tool_call>\n{"name": "x"}\n</tool_call>b',
    "<tool_call>\n<function=E>\n<parameter=a>\nx\n<parameter=b>\ny\n</function>\nDone.",
    "<tool_call>\n<function=W>\n<parameter=c>\nx</parameter> y\n</parameter>\n</function>",
    "<tool_call>\n<function=W>\n<parameter=bad key>\nx\n</parameter>\n</function>\nz",
    "ok\n<tool_call>\n<function=Write>\n<parameter=content>\nhalf a fi",
    "<tool_call>\n<function=" + "f" * 300 + ">",
]
Qwen = partial(Qwen3CoderDecoder, SCHEMAS)


def test_write_with_special_characters_is_raw_text() -> None:
    events = decode_whole(Qwen3CoderDecoder, WRITE)
    assert calls_of(events) == [("Write", {"file_path": "src/app.py", "content": FILE_CONTENT})]
    assert text_of(events) == "I'll write it.\n\n\nDone."
    markup = WRITE[WRITE.index("<function=Write>") + 16 : WRITE.index("</function>")]
    assert deltas_text(events, "call_0") == markup
    assert field_values(events) == {"file_path": "src/app.py", "content": FILE_CONTENT}


def test_schema_types_the_values() -> None:
    text = (
        "<tool_call>\n<function=Config>\n<parameter=extra>\n7\n</parameter>\n"
        "<parameter=ratio>\n0.5\n</parameter>\n<parameter=enabled>\ntrue\n</parameter>\n"
        '<parameter=opts>\n{"a": [1, null]}\n</parameter>\n<parameter=tags>\n["x"]\n</parameter>\n'
        "<parameter=either>\nFalse\n</parameter>\n<parameter=port>\nnot a number\n</parameter>\n"
        "<parameter=maybe>\nnull\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert calls_of(decode_whole(Qwen, text)) == [
        (
            "Config",
            {
                "extra": "7",  # not in the schema: a string, as written
                "ratio": 0.5,
                "enabled": True,
                "opts": {"a": [1, None]},
                "tags": ["x"],
                "either": False,
                "port": "not a number",  # does not parse as its type: kept as written
                "maybe": None,  # null is allowed: JSON null, as the peers read it
            },
        )
    ]


def test_without_a_schema_every_value_is_a_string() -> None:
    text = "<tool_call>\n<function=Read>\n<parameter=offset>\n10\n</parameter>\n</function>"
    assert calls_of(decode_whole(Qwen3CoderDecoder, text)) == [("Read", {"offset": "10"})]


def test_back_to_back_calls_and_several_functions_in_one_block() -> None:
    events = decode_whole(Qwen, BACK_TO_BACK)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py", "offset": 10}),
        ("Read", {"file_path": "b.py"}),
        ("Bash", {"command": "ls"}),
    ]
    assert text_of(events) == "Both:\n\n end"


def test_a_missing_closing_parameter_tag_is_tolerated() -> None:
    text = (
        "<tool_call>\n<function=Edit>\n<parameter=file_path>\na.py\n"
        "<parameter=old_string>\nx\n</function>\n</tool_call>"
    )
    events = decode_whole(Qwen3CoderDecoder, text)
    assert calls_of(events) == [("Edit", {"file_path": "a.py", "old_string": "x"})]
    assert fields_of(events) == ["file_path", "old_string"]


def test_a_value_may_contain_a_closing_parameter_tag() -> None:
    # Code that writes this very format; the regex/cursor parsers of vLLM and SGLang end
    # such a value early.
    value = 'out = "</parameter>"\nprint(out)'
    text = (
        f"<tool_call>\n<function=Write>\n<parameter=content>\n{value}\n</parameter>\n"
        "<parameter=file_path>\nw.py\n</parameter>\n</function>\n</tool_call>"
    )
    events = decode_whole(Qwen3CoderDecoder, text)
    assert calls_of(events) == [("Write", {"content": value, "file_path": "w.py"})]


def test_a_long_value_streams_as_it_arrives() -> None:
    # vllm #30439, sglang #27005: peers emit a string parameter only once it closed.
    body = "".join(f"line {i}: <b>&amp; é</b>\n" for i in range(500))
    assert len(body) > 10_000
    text = f"<tool_call>\n<function=Write>\n<parameter=content>\n{body}\n</parameter>\n"
    decoder = Qwen3CoderDecoder()
    streamed = ""
    for piece in chunks(text[: text.index("</parameter>")], 50):
        events = decoder.feed(piece)
        streamed += "".join(ev.text for ev in events if isinstance(ev, ToolCallDelta))
        assert not fields_of(events), "the parameter has not closed yet"
    assert body in streamed
    events = decoder.feed("</parameter>\n</function>")
    assert field_values(events) == {"content": body}


def test_start_goes_out_on_the_chunk_that_closes_the_function_tag() -> None:
    start_chunk(Qwen3CoderDecoder, WRITE, WRITE.index("<function=Write>") + 15)


def test_a_partial_tag_is_held_back_never_leaked() -> None:
    decoder = Qwen3CoderDecoder()
    assert decoder.feed("x <tool_") == [TextDelta("x ")]
    assert decoder.feed("callback") == [TextDelta("<tool_callback")]
    for sample in SAMPLES:
        assert_no_markup_leak(Qwen3CoderDecoder, sample)


def test_llama_function_tag_is_not_taken_for_qwen() -> None:
    # Llama 3.1 writes <function=name>{json}</function>: same prefix, other format.
    bare = 'Calling <function=get_weather>{"city": "Paris"}</function>'
    events = decode_whole(Qwen3CoderDecoder, bare)
    assert text_of(events) == bare
    assert not calls_of(events)
    inside = '<tool_call>\n<function=get_weather>{"city": "Paris"}</function>\n</tool_call>ok'
    events = decode_whole(Qwen3CoderDecoder, inside)
    [end] = ends_of(events)
    assert end.error is not None
    assert end.raw == '{"city": "Paris"}'
    assert text_of(events) == "ok"


def test_a_block_that_is_not_a_call_is_reported_and_shown() -> None:
    text = 'a<tool_call>\n{"name": "x"}\n</tool_call>b'
    events = decode_whole(Qwen3CoderDecoder, text)
    assert text_of(events) == text
    assert [e.raw for e in errors_of(events)] == ["<tool_call>\n"]


def test_a_call_cut_off_ends_with_an_error_and_its_raw_markup() -> None:
    text = "ok\n<tool_call>\n<function=Write>\n<parameter=content>\nhalf a fi"
    events = decode_whole(Qwen3CoderDecoder, text)
    [end] = ends_of(events)
    assert not end.ok
    assert end.raw == "\n<parameter=content>\nhalf a fi"
    assert text_of(events) == "ok\n"


def test_a_missing_closing_tool_call_tag_leaves_the_following_text() -> None:
    text = "<tool_call>\n<function=Ls>\n</function>\nAll done."
    events = decode_whole(Qwen3CoderDecoder, text)
    assert calls_of(events) == [("Ls", {})]
    assert text_of(events) == "\nAll done."


@settings(max_examples=60, deadline=None)
@given(sample=st.sampled_from(SAMPLES + ODD), cuts=cut_points(400))
def test_any_chunking_gives_the_same_events(sample: str, cuts: list[int]) -> None:
    assert_same_in_any_chunking(Qwen, sample, cuts)


# -- round trip: values rendered as the chat template does --------------------------------

_KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
_STRINGS = (
    st.lists(
        st.sampled_from([*"ab <>&\"'\n\té😀", "</parameter>", "]]>", "<tool_call>", "\r"]),
        max_size=15,
    )
    .map("".join)
    .filter(lambda s: "<parameter=" not in s and "</function>" not in s)
)
_TYPED: list[tuple[str, st.SearchStrategy[Any]]] = [
    ("string", _STRINGS),
    ("integer", st.integers()),
    ("number", st.floats(allow_nan=False, allow_infinity=False)),
    ("boolean", st.booleans()),
    ("null", st.none()),
    ("array", st.lists(st.integers(), max_size=3)),
    ("object", st.dictionaries(_KEYS, _STRINGS, max_size=2)),
]
_PARAM = st.sampled_from(_TYPED).flatmap(lambda tv: st.tuples(st.just(tv[0]), tv[1]))


def render_qwen(name: str, args: dict[str, Any]) -> str:
    params = "".join(
        f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
        for k, v in args.items()
    )
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


@settings(max_examples=150, deadline=None)
@given(
    params=st.dictionaries(_KEYS, _PARAM, max_size=4),
    before=_STRINGS.filter(lambda t: "<tool_call>" not in t),
    cuts=cut_points(300),
)
def test_round_trip(params: dict[str, tuple[str, Any]], before: str, cuts: list[int]) -> None:
    args = {k: v for k, (_, v) in params.items()}
    schema = {
        "Tool": {"type": "object", "properties": {k: {"type": t} for k, (t, _) in params.items()}}
    }
    text = before + "\n\n" + render_qwen("Tool", args) + "\nbye"
    factory = partial(Qwen3CoderDecoder, schema)
    events = decode_split(factory, text, cuts)
    assert calls_of(events) == [("Tool", args)]
    assert text_of(events) == before + "\n\n\nbye"
    assert merge_adjacent(events) == merge_adjacent(decode_whole(factory, text))
    [end] = ends_of(events)
    assert isinstance(end, ToolCallEnd)


# -- literal markup inside a value: a tag counts only where the structure allows it --------

_PLAIN = st.text(st.sampled_from([*"ab =\"'(){}>/\t é"]), max_size=12)
_ANY_TAG = st.sampled_from(
    ["<tool_call>", "</tool_call>", "<function=f>", "</function>", "<parameter=k>", "</parameter>"]
)
_LINE = st.one_of(
    _PLAIN,
    # a tag quoted in code: never at the start or the end of its line (a line ending
    # ``</parameter>`` before one starting ``</function>`` is the close, for every peer)
    st.tuples(_PLAIN.filter(bool), _ANY_TAG, _PLAIN.filter(str.strip)).map("".join),
    # on a line of its own but not where the structure allows it
    st.just("<parameter=path>"),  # a key this call already gave
    st.tuples(st.sampled_from(["</parameter>", "</function>"]), _PLAIN.filter(str.strip)).map(
        lambda p: f"{p[0]} {p[1].strip()}"
    ),
    # a whole call the value quotes, as a file of tests or templates does
    st.tuples(_KEYS, _KEYS, _PLAIN).map(
        lambda p: (
            f"<tool_call>\n<function={p[0]}>\n<parameter={p[1]}>\n{p[2]}\n</parameter>\n"
            "</function>\n</tool_call>"
        )
    ),
    st.tuples(_KEYS, _PLAIN).map(
        lambda p: f"<function={p[0]}>\n<parameter=path>\n{p[1]}\n</parameter>\n</function>"
    ),
)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=6), cuts=cut_points(400))
def test_markup_inside_a_value_is_value_text(lines: list[str], cuts: list[int]) -> None:
    """A literal ``</function>`` does not end the call, a literal ``<parameter=path>`` does
    not overwrite ``path`` (a write to fixture.py once became a write to literal/value)."""
    content = "\n".join(lines)
    args = {"path": "fixture.py", "content": content}
    text = render_qwen("write_file", args) + "\nDone."
    schema = {"write_file": {"properties": {"path": {"type": "string"}, "content": {}}}}
    for factory in (Qwen3CoderDecoder, partial(Qwen3CoderDecoder, schema)):
        events = decode_split(factory, text, cuts)
        assert calls_of(events) == [("write_file", args)]
        assert text_of(events) == "\nDone."
        assert merge_adjacent(events) == merge_adjacent(decode_whole(factory, text))


def test_a_nested_call_in_a_value_does_not_end_the_call() -> None:
    content = (
        'doc = """\n<tool_call>\n<function=write_file>\n<parameter=path>\nliteral/value\n'
        '</parameter>\n</function>\n</tool_call>\n"""'
    )
    text = render_qwen("write_file", {"path": "fixture.py", "content": content})
    assert calls_of(decode_whole(Qwen3CoderDecoder, text)) == [
        ("write_file", {"path": "fixture.py", "content": content})
    ]


# -- typing against the schema, as the production parsers do ---------------------------------

_NULLABLE = [
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "object"},
    {"type": "array"},
    {"type": ["string", "null"]},
    {"anyOf": [{"type": "string"}, {"type": "null"}]},
    {"anyOf": [{"type": "integer"}, {"type": "null"}]},
]


def _typed(schema: dict[str, Any], raw: str) -> Any:
    text = render_qwen("T", {"v": raw})
    factory = partial(Qwen3CoderDecoder, {"T": {"properties": {"v": schema}}})
    [(_, args)] = calls_of(decode_whole(factory, text))
    return args["v"]


@pytest.mark.parametrize("schema", _NULLABLE)
@pytest.mark.parametrize("raw", ["null", "None", " null "])
def test_null_is_json_null_where_the_schema_is_not_only_a_string(
    schema: dict[str, Any], raw: str
) -> None:
    assert _typed(schema, raw) is None
    assert _typed({"type": "string"}, raw) == raw


@settings(max_examples=100, deadline=None)
@given(number=st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_integer_and_number_follow_the_written_json(number: float) -> None:
    written = json.dumps(number)
    assert _typed({"type": "number"}, written) == number
    assert _typed({"type": "float"}, written) == number  # a Python name the peers accept
    expected_int = number if isinstance(number, int) else written  # 2.0 is not an integer
    assert _typed({"type": "integer"}, written) == expected_int
    assert _typed({"type": "int"}, written) == expected_int


# -- variants models really write (docs/decoding.md, "Variants") ------------------------------


@pytest.mark.parametrize("drift", ["</parameter1>", "</parameter_function>", "</parameter"])
@pytest.mark.parametrize("after", ["<parameter=days>\n3\n</parameter>\n", ""])
def test_a_drifted_close_marker_alone_on_the_last_line_closes_the_value(
    drift: str, after: str
) -> None:
    text = (
        f"<tool_call>\n<function=get_weather>\n<parameter=city>\nShanghai\n{drift}\n"
        f"{after}</function>\n</tool_call>"
    )
    args = {"city": "Shanghai", **({"days": "3"} if after else {})}
    assert calls_of(decode_whole(Qwen3CoderDecoder, text)) == [("get_weather", args)]


@pytest.mark.parametrize(
    "value", ["<config>\n</parameters>", "x </parameterList>", "</parameter1> x"]
)
def test_a_value_closed_properly_keeps_what_looks_like_a_drifted_marker(value: str) -> None:
    text = render_qwen("f", {"a": value, "b": "1"})
    assert calls_of(decode_whole(Qwen3CoderDecoder, text)) == [("f", {"a": value, "b": "1"})]

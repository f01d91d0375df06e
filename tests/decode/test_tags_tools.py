"""Text formats with the declared tools: what the tool list lets the decoders accept.

The agent and the proxy always know the tools they offered. With that list, a bare
Qwen3-Coder ``<function=NAME>``, llama.cpp's other Hermes wrappers and a JSON object naming a
declared tool are calls; the parameter schemas decide a ``</parameter>`` inside a value and
type Python-literal values. Without a list, or for a name not declared, all of it stays text.
The hand-written streams ``tests/fixtures/*_tools.txt`` meet the decoder contract (whole,
byte by byte, any split, reviewed snapshot).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    assert_same_in_any_chunking,
    calls_of,
    decode_whole,
    ends_of,
    errors_of,
    merge_adjacent,
    start_chunk,
    text_of,
)
from tests.helpers import (
    FIXTURES,
    assert_snapshot,
    check_invariants,
    cut_points,
    feed_pieces,
    split_at,
)
from toolwire.decode import TextDecoder, TextStream, decoder_for
from toolwire.decode.tags import HermesDecoder, Qwen3CoderDecoder
from toolwire.events import Event

TOOLS: dict[str, dict[str, Any]] = {
    "Read": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
    },
    "Write": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
    },
    "Todo": {
        "type": "object",
        "properties": {"todos": {"type": "array"}, "meta": {"type": "object"}},
    },
}
Qwen = partial(Qwen3CoderDecoder, TOOLS)
Hermes = partial(HermesDecoder, TOOLS)

BARE = (
    "Reading it.\n\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n"
    "<parameter=limit>\n5\n</parameter>\n</function>\n<function=Read>\n"
    "<parameter=file_path>b.py</parameter>\n</function>\n</tool_call>\nDone."
)
# A file that itself holds Qwen3-Coder markup: ``new_string`` is no parameter of Write.
QUOTED = (
    "<tool_call>\n<function=Write>\n<parameter=file_path>\nt.py\n</parameter>\n"
    '<parameter=content>\nT = """\n</parameter>\n<parameter=new_string>\nx\n</parameter>\n'
    '"""\n</parameter>\n</function>\n</tool_call>'
)
QUOTED_CONTENT = 'T = """\n</parameter>\n<parameter=new_string>\nx\n</parameter>\n"""'


# -- Qwen3-Coder ----------------------------------------------------------------------------


def test_qwen_bare_function_of_a_declared_tool_is_a_call() -> None:
    events = decode_whole(Qwen, BARE)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py", "limit": 5}),
        ("Read", {"file_path": "b.py"}),
    ]
    assert text_of(events) == "Reading it.\n\n\n\nDone."
    assert not errors_of(events)


@pytest.mark.parametrize(
    "text",
    [
        "<function=Nope>\n<parameter=x>\n1\n</parameter>\n</function>",  # not declared
        "Use <function=Read>\n<parameter=file_path>\na\n</parameter>\n</function>",  # mid-line
        "Call it as <function=Read> with a path.",  # prose
        "<function=Read> then <parameter=file_path> x",  # no markup follows the name
        '<function=Read>{"file_path": "a.py"}</function>',  # Llama 3.1's JSON body
        "<function=Read",  # cut
    ],
)
def test_qwen_bare_function_that_is_not_a_declared_call_stays_text(text: str) -> None:
    events = decode_whole(Qwen, text)
    assert text_of(events) == text
    assert not calls_of(events)
    assert not errors_of(events)


def test_qwen_an_undeclared_function_after_a_bare_call_is_text_with_its_spacing() -> None:
    text = "<function=Read>\n</function>\n\n<function=Nope>\n</function>"
    events = decode_whole(Qwen, text)
    assert calls_of(events) == [("Read", {})]
    assert text_of(events) == "\n\n<function=Nope>\n</function>"


def test_qwen_bare_function_without_a_tool_list_stays_text() -> None:
    events = decode_whole(Qwen3CoderDecoder, BARE)
    assert not calls_of(events)


def test_qwen_bare_call_starts_when_its_first_tag_confirms_it() -> None:
    start_chunk(Qwen, BARE, BARE.index("<parameter=") + len("<parameter=") - 1)


def test_qwen_schema_tells_a_closing_tag_inside_a_value_from_a_real_one() -> None:
    events = decode_whole(Qwen, QUOTED)
    assert calls_of(events) == [("Write", {"file_path": "t.py", "content": QUOTED_CONTENT})]
    # Without the tool list, the undeclared <parameter=new_string> reads as a parameter.
    [(_, args)] = calls_of(decode_whole(Qwen3CoderDecoder, QUOTED))
    assert "new_string" in args


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("{'key': 'value'}", {"key": "value"}),
        ("\"{'key': 'value', 'n': 1}\"", {"key": "value", "n": 1}),
        ('[\n {"content": "a", "status": \'pending\'}\n]', [{"content": "a", "status": "pending"}]),
        ("{'ok': True, 'none': None}", {"ok": True, "none": None}),
    ],
)
def test_qwen_python_literals_are_typed_by_the_schema(raw: str, value: Any) -> None:
    key = "todos" if raw.lstrip().startswith("[") else "meta"
    text = f"<tool_call>\n<function=Todo>\n<parameter={key}>\n{raw}\n</parameter>\n</function>"
    assert calls_of(decode_whole(Qwen, text)) == [("Todo", {key: value})]


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        ("meta", "{'a': open('x')}"),  # not a literal
        ("meta", "[1, 2]"),  # a literal of another type
        ("todos", "(1, 2)"),  # a tuple is no JSON value
        ("todos", "[1+2j]"),
        ("meta", "{1: 'a'}"),  # keys must be strings
        ("meta", "[" * 300 + "]" * 300),
    ],
)
def test_qwen_values_that_are_no_literal_of_the_type_stay_text(key: str, raw: str) -> None:
    text = f"<tool_call>\n<function=Todo>\n<parameter={key}>\n{raw}\n</parameter>\n</function>"
    assert calls_of(decode_whole(Qwen, text)) == [("Todo", {key: raw})]


# -- Hermes ---------------------------------------------------------------------------------

FUNCTIONS = (
    '<function=Read>{"file_path": "a.py"}</function>\n'
    '<function name="Write">\n{"file_path": "b.py", "content": "x</function>y"}\n</function>\nok'
)
FENCED = (
    'Here:\n```json\n  {"name": "Read", "arguments": {"file_path": "a.py"}}\n```\n'
    '{"name": "Write", "arguments": {"file_path": "b.py", "content": ""}}\nthen more'
)


def test_hermes_function_tags_of_declared_tools_are_calls() -> None:
    events = decode_whole(Hermes, FUNCTIONS)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py"}),
        ("Write", {"file_path": "b.py", "content": "x</function>y"}),
    ]
    assert text_of(events).strip() == "ok"
    assert not errors_of(events)


def test_hermes_fenced_and_bare_json_naming_a_declared_tool_are_calls() -> None:
    events = decode_whole(Hermes, FENCED)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py"}),
        ("Write", {"file_path": "b.py", "content": ""}),
    ]
    assert text_of(events) == "Here:\n\n\nthen more"  # the fence's lines go with it


@pytest.mark.parametrize(
    "text",
    [
        '<function=Nope>{"a": 1}</function>',  # not declared
        '{"name": "Nope", "arguments": {}}',
        '```\n{"name": "Nope", "arguments": {}}\n```',
        'See {"name": "Read", "arguments": {}} here',  # mid-line
        '{"a": 1, "name": "Read"}',  # an object that does not start with its name
        '<function=Read>["a"]</function>',
        '<tool>{"name": "Read", "arguments": {}}</tool>',  # other wrappers
        '<response>{"name": "Read", "arguments": {}}</response>',
        "```json\nnot json\n```",
        "{}",
    ],
)
def test_hermes_anything_else_stays_text(text: str) -> None:
    events = decode_whole(Hermes, text)
    assert text_of(events) == text
    assert not calls_of(events)
    assert not errors_of(events)


def test_hermes_lenient_forms_need_the_tool_list() -> None:
    for text in (FUNCTIONS, FENCED):
        assert not calls_of(decode_whole(HermesDecoder, text))


def test_hermes_broken_arguments_after_a_declared_name_fail_the_call() -> None:
    # The call started when its name was known (streaming); it is reported, never run.
    events = decode_whole(Hermes, '<function=Read>{"file_path": tru}</function>after')
    [end] = ends_of(events)
    assert not end.ok
    assert text_of(events) == "after"


def test_hermes_bare_json_starts_on_the_closing_quote_of_its_arguments_key() -> None:
    text = '{"name": "Read", "arguments": {"file_path": "a.py"}}'
    start_chunk(Hermes, text, text.index('arguments"') + 9)


@pytest.mark.parametrize(
    "text",
    [
        # A tool's definition, as a model explaining its tools writes one: no call.
        '{"name": "Read", "description": "Reads a file.", "parameters": {"type": "object"}}',
        '{"name": "Read", "input_schema": {"type": "object"}}',
        '{"name": "Read"}',
    ],
)
def test_hermes_bare_json_naming_a_declared_tool_without_arguments_is_text(text: str) -> None:
    events = decode_whole(Hermes, text)
    assert calls_of(events) == []
    assert text_of(events) == text


def test_hermes_function_tag_starts_on_the_brace_of_its_body() -> None:
    start_chunk(Hermes, FUNCTIONS, FUNCTIONS.index("{"))


def test_hermes_an_object_that_is_no_call_is_shown_without_waiting_for_its_end() -> None:
    decoder = Hermes()
    assert text_of(decoder.feed('{"title": "a long ')) == '{"title": "a long '


# -- the contract over hand-written streams -----------------------------------------------

_STREAMS: dict[str, Callable[[], TextDecoder]] = {
    "qwen3_coder_tools": Qwen,
    "hermes_tools": Hermes,
}
SAMPLES = [BARE, QUOTED, FUNCTIONS, FENCED]


@settings(max_examples=60, deadline=None)
@given(cuts=cut_points(400))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    for sample in SAMPLES:
        assert_same_in_any_chunking(Qwen if sample in (BARE, QUOTED) else Hermes, sample, cuts)


def _stream(name: str) -> TextStream:
    return TextStream(_STREAMS[name]())


def _data(name: str) -> bytes:
    return (FIXTURES / f"{name}.txt").read_bytes()


def _decode(name: str, pieces: list[bytes]) -> list[Event]:
    # Text goes out in the pieces it came in: only the merged form is chunking-free.
    return merge_adjacent(feed_pieces(_stream(name), pieces))


@pytest.mark.parametrize("name", sorted(_STREAMS))
def test_stream_whole_and_bytewise(name: str) -> None:
    data = _data(name)
    whole = feed_pieces(_stream(name), [data])
    check_invariants(whole)
    assert _decode(name, [data[i : i + 1] for i in range(len(data))]) == merge_adjacent(whole)


@pytest.mark.parametrize("name", sorted(_STREAMS))
@settings(max_examples=40, deadline=None)
@given(draw=st.data())
def test_stream_any_split(name: str, draw: st.DataObject) -> None:
    data = _data(name)
    cuts = draw.draw(cut_points(len(data)))
    assert _decode(name, split_at(data, cuts)) == _decode(name, [data])


@pytest.mark.parametrize("name", sorted(_STREAMS))
def test_stream_snapshot(name: str) -> None:
    assert_snapshot(f"decode_{name}", _decode(name, [_data(name)]))


@settings(max_examples=60, deadline=None)
@given(draw=st.data())
def test_stream_cut_anywhere(draw: st.DataObject) -> None:
    name = draw.draw(st.sampled_from(sorted(_STREAMS)))
    data = _data(name)
    cut = draw.draw(st.integers(min_value=0, max_value=len(data)))
    check_invariants(feed_pieces(_stream(name), [data[:cut]]))


@pytest.mark.parametrize(("fmt", "text"), [("hermes", FUNCTIONS), ("qwen3-coder", BARE)])
def test_the_registry_passes_the_tools_to_text_formats(fmt: str, text: str) -> None:
    with_tools = feed_pieces(decoder_for(fmt, tools=TOOLS), [text.encode()])
    assert len(calls_of(with_tools)) == 2
    assert not calls_of(feed_pieces(decoder_for(fmt), [text.encode()]))


_PIECES = st.sampled_from(
    [
        "\n",
        " ",
        "x",
        "{",
        "}",
        '"',
        ":",
        ",",
        "```",
        "json\n",
        '"name"',
        '"arguments"',
        '"Read"',
        '"Nope"',
        "{}",
        "<function=",
        '<function name="',
        "Read",
        ">",
        "</function>",
        "<parameter=",
        "file_path",
        "</parameter>",
        "<tool_call>",
        "</tool_call>",
        "tru",
    ]
)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=30), cuts=cut_points(200))
def test_any_text_decodes_the_same_in_any_chunking(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    for factory in (Qwen, Hermes):
        assert_same_in_any_chunking(factory, text, cuts)


def test_qwen_reading_a_literal_raises_no_warning() -> None:
    # The compiler warns about ``'\\d'``; on the agent's stderr that would be noise.
    value = "{'b': '\\d'}"
    text = f"<tool_call>\n<function=Todo>\n<parameter=meta>\n{value}\n</parameter>\n</function>"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert calls_of(decode_whole(Qwen, text)) == [("Todo", {"meta": {"b": "\\d"}})]
    assert not caught

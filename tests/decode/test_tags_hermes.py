"""Hermes / Qwen JSON tool calls: ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    assert_no_markup_leak,
    assert_same_in_any_chunking,
    calls_of,
    chunks,
    decode,
    decode_split,
    decode_whole,
    deltas_text,
    ends_of,
    errors_of,
    fields_of,
    merge_adjacent,
    start_chunk,
    text_of,
)
from tests.helpers import cut_points
from toolwire.decode.tags import HermesDecoder
from toolwire.events import TextDelta, ToolCallDelta, ToolCallStart

FILE_CONTENT = "if a < b && c > \"d\":\n    print('héllo wörld 😀')\n"
WRITE_ARGS = {"file_path": "src/app.py", "content": FILE_CONTENT}
WRITE_JSON = json.dumps(WRITE_ARGS)
WRITE = (
    "I'll write it.\n<tool_call>\n"
    f'{{"name": "Write", "arguments": {WRITE_JSON}}}'
    "\n</tool_call>\nDone."
)
STRING_ARGS = (
    '<tool_call>{"name": "Write", "arguments": '
    + json.dumps(json.dumps(WRITE_ARGS, ensure_ascii=True))
    + "}</tool_call>"
)
ARGS_FIRST = (
    '<tool_call>{"parameters": {"command": "ls"}, "id": [1, {"x": "}"}], "name": "Bash"}'
    "</tool_call>"
)
BACK_TO_BACK = (
    'Reading both.<tool_call>{"name": "Read", "arguments": {"file_path": "a.py"}}</tool_call>\n'
    '<tool_call>{"name": "Read", "arguments": {"file_path": "b.py", "limit": 10}}</tool_call>'
    ' and <tool_call>\n{\n  "name": "Glob",\n  "arguments": {"pattern": "*.py"}\n}\n'
    "</tool_call> ok"
)
SAMPLES = [WRITE, STRING_ARGS, ARGS_FIRST, BACK_TO_BACK]
# Broken or cut-off markup: the events must not depend on the chunking either.
ODD = [
    '<tool_call>{"name": "Edit", "arguments": {"a": tru}}</tool_call>after',
    '<tool_call>{"name": "Edit", "arguments": {"a": 1}, oops}</tool_call>after',
    '<tool_call>{"name": "B", "arguments": {"x": 2}</tool_call><tool_call>{"name": "C", '
    '"arguments": {"x": [3</tool_call> text',
    'x<tool_call>{"arguments": {}}</tool_call>y<tool_call>not json</tool_call>z',
    '<tool_call>{"name": "W", "arguments": "{\\"a\\": \\"\\ud83d\\ude00\\q\\"}"}</tool_call>',
    '<tool_call>{"arguments": {"a": "\\u00e9"}, "name": ""}</tool_call>',
    'ok <tool_call>{"name": "Write", "arguments": {"a": "b',
    '<tool_call>{"name": "Ls", "arguments": {"p": 1}}\n',
]


def test_write_with_special_characters() -> None:
    events = decode_whole(HermesDecoder, WRITE)
    assert calls_of(events) == [("Write", WRITE_ARGS)]
    assert text_of(events) == "I'll write it.\n\nDone."
    # The argument text is the arguments value exactly as the model wrote it.
    assert deltas_text(events, "call_0") == WRITE_JSON
    assert fields_of(events) == ["file_path", "content"]


def test_arguments_given_as_a_json_string_stream_as_the_object() -> None:
    events = decode_whole(HermesDecoder, STRING_ARGS)
    assert calls_of(events) == [("Write", WRITE_ARGS)]
    assert fields_of(events) == ["file_path", "content"]


def test_string_arguments_split_inside_escapes_decode_whole_characters() -> None:
    args = {"emoji": '😀 é \\ "', "n": 1}
    inner = json.dumps(args, ensure_ascii=False)
    text = '<tool_call>{"name": "W", "arguments": ' + json.dumps(inner) + "}"
    assert "\\ud83d\\ude00" in text  # a surrogate pair, escaped, that chunks will split
    events = decode(HermesDecoder, list(text))
    assert calls_of(events) == [("W", args)]
    assert "\ud83d" not in deltas_text(events, "call_0")  # no half character ever went out


def test_arguments_before_the_name_wait_for_it() -> None:
    decoder = HermesDecoder()
    cut = ARGS_FIRST.index('"name"')
    assert decoder.feed(ARGS_FIRST[:cut]) == []
    events = decoder.feed(ARGS_FIRST[cut:]) + decoder.close()
    assert isinstance(events[0], ToolCallStart)
    assert events[0].name == "Bash"
    assert calls_of(events) == [("Bash", {"command": "ls"})]
    assert deltas_text(events, "call_0") == '{"command": "ls"}'


def test_back_to_back_calls_and_text_between() -> None:
    events = decode_whole(HermesDecoder, BACK_TO_BACK)
    assert calls_of(events) == [
        ("Read", {"file_path": "a.py"}),
        ("Read", {"file_path": "b.py", "limit": 10}),
        ("Glob", {"pattern": "*.py"}),
    ]
    assert text_of(events) == "Reading both.\n and  ok"


def test_a_tool_without_arguments_still_gets_called() -> None:
    # vllm #28806 dropped parameterless tools.
    text = '<tool_call>{"name": "Now"}</tool_call><tool_call>{"name": "Ls", "arguments": {}}'
    assert calls_of(decode_whole(HermesDecoder, text)) == [("Now", {}), ("Ls", {})]


def test_the_name_is_never_partial_and_starts_on_its_closing_quote() -> None:
    text = '<tool_call>{"name": "Re\\u0061d", "arguments": {"file_path": "x"}}</tool_call>'
    start_chunk(HermesDecoder, text, text.index('", "arguments"'))
    starts = [ev for ev in decode(HermesDecoder, list(text)) if isinstance(ev, ToolCallStart)]
    assert [s.name for s in starts] == ["Read"]


def test_closing_tag_inside_a_string_is_content() -> None:
    args = {"content": "ends with </tool_call> and <tool_call>"}
    text = f'<tool_call>{{"name": "Write", "arguments": {json.dumps(args)}}}</tool_call>'
    events = decode_whole(HermesDecoder, text)
    assert calls_of(events) == [("Write", args)]
    assert text_of(events) == ""


def test_arguments_stream_before_the_call_closes() -> None:
    body = "x" * 10_000
    text = f'<tool_call>{{"name": "Write", "arguments": {{"content": "{body}"}}}}</tool_call>'
    decoder = HermesDecoder()
    streamed = ""
    for piece in chunks(text[: text.index("}}</tool_call>")], 50):
        streamed += "".join(ev.text for ev in decoder.feed(piece) if isinstance(ev, ToolCallDelta))
    assert body in streamed


def test_a_partial_tag_is_held_back_never_leaked() -> None:
    decoder = HermesDecoder()
    assert decoder.feed("Hi <tool_c") == [TextDelta("Hi ")]
    assert decoder.feed("all is a tag") == [TextDelta("<tool_call is a tag")]
    for sample in SAMPLES:
        assert_no_markup_leak(HermesDecoder, sample)


def test_invalid_arguments_end_the_call_with_the_raw_text() -> None:
    text = '<tool_call>{"name": "Edit", "arguments": {"a": tru}}</tool_call>after'
    events = decode_whole(HermesDecoder, text)
    [end] = ends_of(events)
    assert end.error is not None
    assert end.raw == '{"a": tru}'
    assert text_of(events) == "after"


def test_a_broken_wrapper_after_the_name_fails_the_call() -> None:
    text = '<tool_call>{"name": "Edit", "arguments": {"a": 1}, oops}</tool_call>after'
    events = decode_whole(HermesDecoder, text)
    [end] = ends_of(events)
    assert end.error is not None
    assert end.raw == '{"a": 1}'
    assert text_of(events) == "after"


def test_dropped_closing_brackets_do_not_swallow_the_rest() -> None:
    text = (
        '<tool_call>{"name": "A", "arguments": {"x": 1}}\n</tool_call>'  # fine
        '<tool_call>{"name": "B", "arguments": {"x": 2}</tool_call>'  # final } missing
        '<tool_call>{"name": "C", "arguments": {"x": [3</tool_call> text'  # more missing
    )
    events = decode_whole(HermesDecoder, text)
    a, b, c = calls_of(events)
    assert a == ("A", {"x": 1})
    assert b == ("B", {"x": 2})
    assert c[0] == "C"
    assert not c[1].ok
    assert text_of(events) == " text"


def test_a_block_that_is_not_a_call_is_reported_and_shown() -> None:
    text = 'x<tool_call>{"arguments": {}}</tool_call>y<tool_call>not json</tool_call>z'
    events = decode_whole(HermesDecoder, text)
    assert not calls_of(events)
    assert text_of(events) == text
    assert [e.raw for e in errors_of(events)] == ['<tool_call>{"arguments": {}}', "<tool_call>"]


def test_a_call_cut_off_ends_with_an_error_and_raw_arguments() -> None:
    events = decode_whole(HermesDecoder, 'ok <tool_call>{"name": "Write", "arguments": {"a": "b')
    [end] = ends_of(events)
    assert not end.ok
    assert end.raw == '{"a": "b'
    assert text_of(events) == "ok "


def test_a_complete_call_missing_only_its_closing_tag_succeeds() -> None:
    events = decode_whole(HermesDecoder, '<tool_call>{"name": "Ls", "arguments": {"p": 1}}\n')
    assert calls_of(events) == [("Ls", {"p": 1})]
    assert text_of(events) == "\n"


def test_a_cut_header_is_flushed_as_text() -> None:
    events = decode_whole(HermesDecoder, 'see <tool_call>{"na')
    assert text_of(events) == 'see <tool_call>{"na'
    assert len(errors_of(events)) == 1


@settings(max_examples=60, deadline=None)
@given(sample=st.sampled_from(SAMPLES + ODD), cuts=cut_points(400))
def test_any_chunking_gives_the_same_events(sample: str, cuts: list[int]) -> None:
    assert_same_in_any_chunking(HermesDecoder, sample, cuts)


# -- round trip ----------------------------------------------------------------------------

_TEXT = st.lists(
    st.sampled_from([*'ab "\\\n\t\x01é€😀</>{}[],:&', "]]>", "\u2028", "</tool_call>"]),
    max_size=20,
).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_ARGS = st.dictionaries(_TEXT, _JSON, max_size=4)


def render_hermes(name: str, args: dict[str, Any], style: str, ascii_only: bool) -> str:
    inner = json.dumps(args, ensure_ascii=ascii_only)
    if style == "string":  # the outer escapes then hold surrogate pairs (\ud83d\ude00)
        inner = json.dumps(json.dumps(args, ensure_ascii=False), ensure_ascii=ascii_only)
    key = "parameters" if style == "parameters" else "arguments"
    if style == "args_first":
        wrapper = f'{{"{key}": {inner},\n "name": {json.dumps(name)}}}'
    else:
        wrapper = f'{{"name": {json.dumps(name)}, "{key}": {inner}}}'
    return f"<tool_call>\n{wrapper}\n</tool_call>"


@settings(max_examples=150, deadline=None)
@given(
    args=_ARGS,
    style=st.sampled_from(["plain", "string", "parameters", "args_first"]),
    ascii_only=st.booleans(),
    before=_TEXT.filter(lambda t: "<tool_call>" not in t),
    cuts=cut_points(300),
)
def test_round_trip(
    args: dict[str, Any], style: str, ascii_only: bool, before: str, cuts: list[int]
) -> None:
    text = before + render_hermes("Tool", args, style, ascii_only) + "\nbye"
    events = decode_split(HermesDecoder, text, cuts)
    assert calls_of(events) == [("Tool", args)]
    assert text_of(events) == before + "\nbye"
    assert merge_adjacent(events) == merge_adjacent(decode_whole(HermesDecoder, text))


# -- variants models really write (docs/decoding.md, "Variants") ------------------------------


@settings(max_examples=50, deadline=None)
@given(
    names=st.lists(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), min_size=1, max_size=3),
    cuts=cut_points(200),
)
def test_a_json_array_of_calls_in_one_block_is_visible_text_never_a_call(
    names: list[str], cuts: list[int]
) -> None:
    """Decided: not a call (the templates write one object per block; an array with a
    broken member would run in part). The block stays visible, with a stream_error."""
    block = json.dumps([{"name": n, "arguments": {"x": 1}} for n in names])
    text = f"<tool_call>\n{block}\n</tool_call>after"
    events = decode_split(HermesDecoder, text, cuts)
    assert calls_of(events) == []
    assert text_of(events) == text
    assert errors_of(events)

"""The open-weight families' text formats: llama3_json, pythonic, mistral, deepseek_v3 and
deepseek_v31, granite, phi4_mini (docs/decoding.md, "The open-weight models' formats").

Each format's calls as its chat template writes them, and the variants servers meet: the
same events whole, char by char and split at every index; the call starting on the chunk
that completes its name (before the arguments are complete); prose, Markdown and code that
mention the markup, undeclared names and calls cut off by ``max_tokens`` never running.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.decode.tags_support import (
    assert_same_in_any_chunking,
    calls_of,
    decode,
    decode_whole,
    errors_of,
    merge_adjacent,
    start_chunk,
    text_of,
)
from toolwire.decode.tags._values import read_literal
from toolwire.decode.textformats import text_decoder
from toolwire.events import ToolCallDelta, ToolCallEnd, ToolCallStart

TOOLS: dict[str, Any] = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}}},
    "Edit": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "new_string": {"type": "string"}},
    },
}
_DS_V3 = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Paris"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>Edit'
    '\n```json\n{"file_path": "a.py", "new_string": "x = [1]"}\n```<｜tool▁call▁end｜>'
    "<｜tool▁calls▁end｜>"
)
_DS_V31 = (
    'Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}'
    '<｜tool▁call▁end｜><｜tool▁call▁begin｜>Edit<｜tool▁sep｜>{"file_path": "a.py", '
    '"new_string": "x = [1]"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
_TWO = [
    ("get_weather", {"city": "Paris"}),
    ("Edit", {"file_path": "a.py", "new_string": "x = [1]"}),
]

# (format, text, calls, visible text): what the format's writers put out.
CASES: list[tuple[str, str, list[tuple[str, Any]], str]] = [
    (
        "llama3_json",
        'Let me look.\n{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "Edit", "arguments": {"file_path": "a.py", "new_string": "x = [1]"}}',
        _TWO,
        "Let me look.\n",
    ),
    (
        "llama3_json",
        '<|python_tag|>{"name": "get_weather", "arguments": {"city": "Paris"}}',
        _TWO[:1],
        "",
    ),
    (
        "pythonic",
        "[get_weather(city='Paris'), Edit(file_path=\"a.py\", new_string='x = [1]')]",
        _TWO,
        "",
    ),
    (
        "pythonic",
        "<|python_start|>[Edit(file_path='a.py', new_string='''def f():\n    return \"x)\"\n''')]"
        "<|python_end|>",
        [("Edit", {"file_path": "a.py", "new_string": 'def f():\n    return "x)"\n'})],
        "",
    ),
    (
        "mistral",
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"arguments": {"file_path": "a.py", "new_string": "x = [1]"}, "name": "Edit"}]',
        _TWO,
        "",
    ),
    (
        "mistral",
        'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]Edit[CALL_ID]a1B2c3D4e'
        '[ARGS]{"file_path": "a.py", "new_string": "x = [1]"}',
        _TWO,
        "Sure.",
    ),
    ("mistral", '[TOOL_CALLS]get_weather{"city": "Paris"}', _TWO[:1], ""),
    ("deepseek_v3", _DS_V3, _TWO, ""),
    ("deepseek_v31", _DS_V31, _TWO, "Sure."),
    ("deepseek_v3", _DS_V31, _TWO, "Sure."),  # one decoder reads both
    (
        "granite",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}},\n'
        ' {"name": "Edit", "arguments": {"file_path": "a.py", "new_string": "x = [1]"}}]\nDone.',
        _TWO,
        "\nDone.",
    ),
    (
        "phi4_mini",
        'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "Edit", "arguments": {"file_path": "a.py", "new_string": "x = [1]"}}]',
        _TWO,
        "",
    ),
]


@pytest.mark.parametrize(("fmt", "text", "calls", "shown"), CASES)
def test_the_formats_calls_decode_in_any_chunking(
    fmt: str, text: str, calls: list[tuple[str, Any]], shown: str
) -> None:
    factory = partial(text_decoder, fmt, TOOLS)
    events = decode_whole(factory, text)
    assert calls_of(events) == calls
    assert text_of(events) == shown
    assert not errors_of(events)
    assert_same_in_any_chunking(factory, text, range(len(text)))


@pytest.mark.parametrize(("fmt", "text", "calls", "shown"), CASES)
def test_the_call_starts_before_its_arguments_end(
    fmt: str, text: str, calls: list[tuple[str, Any]], shown: str
) -> None:
    # Fed char by char: the first call starts while its first argument is still arriving,
    # and its arguments stream before it ends.
    decoder = text_decoder(fmt, TOOLS)
    value = next(iter(calls[0][1].values()))
    first_value_end = text.index(value) + len(value)
    started_at = ended_at = None
    deltas = 0
    for i, ch in enumerate(text):
        for ev in decoder.feed(ch):
            if isinstance(ev, ToolCallStart) and started_at is None:
                started_at = i
            elif isinstance(ev, ToolCallDelta) and ended_at is None:
                deltas += 1
            elif isinstance(ev, ToolCallEnd) and ended_at is None:
                ended_at = i
    assert started_at is not None
    assert started_at < first_value_end - len(value)
    assert deltas > 1


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("llama3_json", 'The call looks like {"name": "get_weather", "parameters": {}} here.'),
        ("llama3_json", '{"name": "delete_everything", "parameters": {}}'),
        ("llama3_json", '{"city": "Paris", "name": "get_weather"}'),
        ("llama3_json", '```json\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```'),
        ("pythonic", "~~~python\n[get_weather(city='Paris')]\n~~~"),
        ("pythonic", "See [the docs](https://example.com) and [get_weather]."),
        ("pythonic", "[delete_everything(force=True)]"),
        ("pythonic", "Call it as [get_weather(city='Paris')] in your code."),
        ("phi4_mini", "Use functools.partial, or functools[0] in a typo."),
        ("phi4_mini", 'functools[{"name": "delete_everything", "arguments": {}}]'),
        ("granite", "Granite writes calls after a tool_call token."),
        ("mistral", "Mistral writes TOOL_CALLS in brackets before its calls."),
        ("deepseek_v3", "DeepSeek's tool▁calls▁begin token opens calls."),
    ],
)
def test_prose_and_undeclared_names_are_no_calls(fmt: str, text: str) -> None:
    events = decode_whole(partial(text_decoder, fmt, TOOLS), text)
    assert calls_of(events) == []
    assert text_of(events) == text  # nothing lost, nothing added
    assert not errors_of(events)


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("llama3_json", '{"name": "Edit", "parameters": {"file_path": "a.py", "new_str'),
        ("pythonic", "[Edit(file_path='a.py', new_string='half"),
        ("mistral", '[TOOL_CALLS]Edit[ARGS]{"file_path": "a.py"'),
        ("deepseek_v31", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>Edit<｜tool▁sep｜>{"file_'),
        ("granite", '<|tool_call|>[{"name": "Edit", "arguments": {"file_path": "a'),
        ("phi4_mini", 'functools[{"name": "Edit", "arguments": {"file_path": '),
    ],
)
def test_a_call_cut_by_max_tokens_fails_and_never_runs(fmt: str, text: str) -> None:
    events = decode_whole(partial(text_decoder, fmt, TOOLS), text)
    ((name, end),) = calls_of(events)
    assert name == "Edit"
    assert isinstance(end, ToolCallEnd)
    assert not end.ok


def test_a_broken_pythonic_call_fails_and_its_siblings_stand() -> None:
    text = "[Edit(file_path=b'a.py'), get_weather(city='Paris'), Edit('positional')]"
    events = decode_whole(partial(text_decoder, "pythonic", TOOLS), text)
    calls = calls_of(events)
    assert [name for name, _ in calls] == ["Edit", "get_weather", "Edit"]
    assert calls[1][1] == {"city": "Paris"}
    assert not calls[0][1].ok
    assert not calls[2][1].ok


def test_a_broken_deepseek_call_skips_to_its_end_token() -> None:
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": 'x'}"
        '<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Oslo"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>After."
    )
    events = decode_whole(partial(text_decoder, "deepseek_v31", TOOLS), text)
    calls = calls_of(events)
    assert not calls[0][1].ok
    assert calls[1] == ("get_weather", {"city": "Oslo"})
    assert text_of(events) == "After."  # no special token leaks


def test_python_tag_before_code_is_the_interpreters_text() -> None:
    text = '<|python_tag|>print("hi")'
    events = decode_whole(partial(text_decoder, "llama3_json", TOOLS), text)
    assert calls_of(events) == []
    assert text_of(events) == text
    assert not errors_of(events)


def test_without_declared_tools_only_special_tokens_open_calls() -> None:
    # ``toolwire decode`` without --tools: a bare object or list may be anything.
    bare = decode_whole(
        partial(text_decoder, "llama3_json", None), '{"name": "x", "parameters": {}}'
    )
    assert calls_of(bare) == []
    tagged = '<|python_tag|>{"name": "x", "parameters": {"a": 1}}'
    assert calls_of(decode_whole(partial(text_decoder, "llama3_json", None), tagged)) == [
        ("x", {"a": 1})
    ]


def test_pythonic_values_are_literals_never_code() -> None:
    assert read_literal("__import__('os').system('true')") is None
    text = "[get_weather(city=__import__('os').getcwd())]"
    ((_, end),) = calls_of(decode_whole(partial(text_decoder, "pythonic", TOOLS), text))
    assert not end.ok


@pytest.mark.parametrize(
    ("fmt", "example"),
    [
        ("llama3_json", '{"name": "get_weather", "parameters": {"city": "Paris"}}'),
        ("pythonic", "[get_weather(city='Paris')]"),
    ],
)
def test_a_bare_call_in_a_code_block_is_an_example(fmt: str, example: str) -> None:
    text = f"For example:\n```\n{example}\n```\nand after the block:\n{example}\n"
    factory = partial(text_decoder, fmt, TOOLS)
    events = decode_whole(factory, text)
    assert calls_of(events) == [("get_weather", {"city": "Paris"})]  # the second only
    assert text_of(events).startswith(f"For example:\n```\n{example}\n```\n")
    assert_same_in_any_chunking(factory, text, range(len(text)))


# Pieces of each format's markup, JSON and prose, glued at random: whatever the mixture,
# every chunking gives the same events, calls keep their invariants, and a text that
# makes no call comes out whole (DeepSeek drops an empty section, pure markup).
_ATOMS = {
    "llama3_json": ['<|python_tag|>', '{', '}', '"name"', ": ", '"get_weather"', '"parameters"',
                    '"arguments"', ", ", '{"city": "P"}', ";", "\n", " ", "x", "[", "]", '"',
                    "\\", "```", "<"],
    "pythonic": ["<|python_start|>", "<|python_end|>", "[", "]", "get_weather", "(", ")",
                 "city=", "'P'", '"Q"', "'''", ", ", "\n", " ", "x", "{", "}", "\\", "```", "="],
    "mistral": ["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "get_weather", '{"city": "P"}', "{", "}",
                "[", "]", '"name"', ": ", '"get_weather"', '"arguments"', ", ", " ", "x", "\n"],
    "deepseek_v3": ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                    "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "function", "get_weather", "\n",
                    "```json\n", "```", '{"city": "P"}', "{", "}", " ", "x"],
    "granite": ["<|tool_call|>", "<tool_call>", "[", "]", "{", "}", '"name"', ": ",
                '"get_weather"', '"arguments"', ", ", '{"city": "P"}', " ", "x", "\n", "<"],
    "phi4_mini": ["functools", "[", "]", "{", "}", '"name"', ": ", '"get_weather"', '"arguments"',
                  ", ", '{"city": "P"}', " ", "x", "\n", "."],
}  # fmt: skip


@pytest.mark.parametrize("fmt", sorted(_ATOMS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_mixture_of_markup_decodes_the_same_in_any_chunking(fmt: str, data: Any) -> None:
    atoms = data.draw(st.lists(st.sampled_from(_ATOMS[fmt]), min_size=1, max_size=25))
    text = "".join(atoms)
    tools = data.draw(st.sampled_from([TOOLS, None]))
    factory = partial(text_decoder, fmt, tools)
    whole = merge_adjacent(decode_whole(factory, text))
    for size in (1, 3):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        assert merge_adjacent(decode(factory, pieces)) == whole
    if not any(isinstance(ev, ToolCallStart) for ev in whole):
        empty = re.compile("<｜tool▁calls▁begin｜>[ \t\r\n]*<｜tool▁calls▁end｜>")
        assert text_of(whole) in (text, empty.sub("", text))


@pytest.mark.parametrize(
    ("fmt", "text", "last"),
    [
        # The chunk holding the character that completes the name starts the call; a
        # bare object (no special token) once its second member is the arguments (a
        # tool's definition names a tool too).
        ("deepseek_v3", _DS_V3, _DS_V3.index("\n")),
        (
            "llama3_json",
            '{"name": "get_weather", "parameters": {}}',
            len('{"name": "get_weather", "parameters'),
        ),
        (
            "llama3_json",
            '<|python_tag|>{"name": "get_weather", "parameters": {}}',
            len('<|python_tag|>{"name": "get_weather'),
        ),
        (
            "mistral",
            '[TOOL_CALLS]get_weather[ARGS]{"city": "P"}',
            len("[TOOL_CALLS]get_weather[ARGS"),
        ),
        ("mistral", '[TOOL_CALLS]get_weather{"city": "P"}', len("[TOOL_CALLS]get_weather")),
        ("pythonic", "[get_weather(city='P')]", len("[get_weather")),
        (
            "granite",
            '<|tool_call|>[{"name": "get_weather"}]',
            len('<|tool_call|>[{"name": "get_weather'),
        ),
    ],
)
def test_the_call_starts_on_the_chunk_that_completes_its_name(
    fmt: str, text: str, last: int
) -> None:
    start_chunk(partial(text_decoder, fmt, TOOLS), text, last)

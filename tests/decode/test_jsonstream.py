"""JsonStream: final value equals json.loads; partial values obey the jsonriver rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import split_at
from toolwire.errors import UsageError
from toolwire.jsonstream import JsonStream

# Text that stresses escapes: quotes, backslashes, control characters, non-ASCII,
# astral characters (surrogate pairs when escaped) and markup.
_TEXT = st.text(
    alphabet=st.sampled_from([*'ab "\\\n\t\x01é€😀</>{}[],:', "\u2028"]),
    max_size=40,
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=25,
)
_OBJECTS = st.dictionaries(_TEXT, _JSON, max_size=6)


def _dumps(value: Any, *, ascii_: bool, indent: int | None) -> str:
    return json.dumps(value, ensure_ascii=ascii_, indent=indent)


def _is_prefix(partial: Any, final: Any) -> bool:
    """``partial`` is what a jsonriver-rule parser may show on its way to ``final``."""
    if type(partial) is not type(final):
        return False
    if isinstance(final, str):
        return final.startswith(partial)
    if isinstance(final, list):
        if len(partial) > len(final):
            return False
        if not partial:
            return True
        done = partial[:-1] == final[: len(partial) - 1]
        return done and _is_prefix(partial[-1], final[len(partial) - 1])
    if isinstance(final, dict):
        keys, final_keys = list(partial), list(final)
        if keys != final_keys[: len(keys)]:
            return False
        if any(partial[k] != final[k] for k in keys[:-1]):
            return False
        return not keys or _is_prefix(partial[keys[-1]], final[keys[-1]])
    return bool(partial == final)


def _feed_checked(pieces: list[str], final: Any) -> tuple[JsonStream, list[str]]:
    """Feed pieces, checking the partial value and reported fields after each one."""
    stream = JsonStream()
    reported: list[str] = []
    for piece in pieces:
        fields = stream.feed(piece)
        snapshot = stream.partial()  # checked at once, before the next feed changes it
        if snapshot is not None:
            assert _is_prefix(snapshot, final), (snapshot, final)
        for key in fields:
            # A field is reported once, when its value is final.
            assert key not in reported
            assert snapshot[key] == final[key]
            reported.append(key)
    return stream, reported


@settings(max_examples=300, deadline=None)
@given(value=_OBJECTS, cuts=st.lists(st.integers(1, 400), max_size=25), ascii_=st.booleans())
def test_final_equals_json_loads_at_any_split(value: Any, cuts: list[int], ascii_: bool) -> None:
    text = _dumps(value, ascii_=ascii_, indent=None)
    final = json.loads(text)
    stream, reported = _feed_checked(split_at(text, cuts), final)
    result = stream.finish()
    assert result.error is None
    assert result.value == final
    assert reported == list(final)  # every top-level field reported, in order
    assert result.raw == text


@settings(max_examples=100, deadline=None)
@given(value=_JSON, cuts=st.lists(st.integers(1, 400), max_size=25))
def test_any_root_type_and_pretty_printing(value: Any, cuts: list[int]) -> None:
    text = _dumps(value, ascii_=True, indent=2)
    final = json.loads(text)
    stream, _ = _feed_checked(split_at(text, cuts), final)
    assert stream.finish().value == final


@given(value=_OBJECTS)
def test_character_by_character(value: Any) -> None:
    text = _dumps(value, ascii_=True, indent=None)
    final = json.loads(text)
    stream, _ = _feed_checked(list(text), final)
    assert stream.finish().value == final


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "x\\u00', {"a": "x"}),  # incomplete \u escape is held back
        ('{"a": "x\\ud83d', {"a": "x"}),  # a lone high surrogate is held back
        ('{"a": "x\\ud83d\\ude00', {"a": "x😀"}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": 12', {}),  # may still become 123
        ('{"a": 1.', {}),
        ('{"a": -', {}),
        ('{"a": tr', {}),  # never speculatively True
        ('{"a": nul', {}),
        ('{"a": "hello', {"a": "hello"}),
        ('{"a', {}),  # an incomplete key never appears
        ('{"a": ', {}),  # nor a key whose value's type is unknown
        ('{"a": {"b": "c"}, "d', {"a": {"b": "c"}}),
        ('{"a": [1, 2', {"a": [1]}),
        ('{"a": [], "b": {}', {"a": [], "b": {}}),
    ],
)
def test_partial_values_follow_the_rules(text: str, expected: Any) -> None:
    stream = JsonStream()
    stream.feed(text)
    assert stream.partial() == expected


def test_escape_split_across_every_boundary() -> None:
    text = json.dumps({"s": 'q"\\\n\t\u00e9\U0001f600\u2028/'}, ensure_ascii=True)
    for i in range(1, len(text)):
        stream = JsonStream()
        stream.feed(text[:i])
        stream.feed(text[i:])
        assert stream.finish().value == json.loads(text)


def test_fields_name_the_delta_that_completes_them() -> None:
    stream = JsonStream()
    assert stream.feed('{"file_path": "src/ap') == ()
    assert stream.feed('p.py", "content": "x') == ("file_path",)
    assert stream.partial() == {"file_path": "src/app.py", "content": "x"}
    assert stream.feed('yz", "n": 4') == ("content",)
    assert stream.feed("2}") == ("n",)  # a number completes at its delimiter
    assert stream.finish().value == {"file_path": "src/app.py", "content": "xyz", "n": 42}


def test_nested_fields_are_not_top_level() -> None:
    stream = JsonStream()
    assert stream.feed('{"a": {"b": 1, "c": "d"}') == ("a",)


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_arguments_mean_empty_object(text: str) -> None:
    stream = JsonStream()
    stream.feed(text)
    result = stream.finish()
    assert (result.value, result.error) == ({}, None)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1',  # truncated
        '{"a": "x',  # truncated in a string
        '{"a": 1,}',  # trailing comma
        '{"a" 1}',
        '{"a": tru}',
        '{"a": "\\x"}',  # invalid escape
        '{"a": "line\nbreak"}',  # raw control character
        '{"a": 1}{"b": 2}',  # two values
        '{"a": 01}',
        "[1 2]",
    ],
)
def test_invalid_json_is_an_error_with_raw_text(text: str) -> None:
    stream = JsonStream()
    for ch in text:
        stream.feed(ch)  # never raises
    result = stream.finish()
    assert result.value is None
    assert result.error is not None
    assert result.error.startswith("invalid JSON arguments")
    assert result.raw == text
    with pytest.raises(ValueError):  # noqa: PT011 - json.loads agrees it is invalid
        json.loads(text)


def test_incremental_error_is_visible_before_the_end() -> None:
    stream = JsonStream()
    stream.feed('{"a": 1,, "b": "')
    assert stream.error is not None
    assert stream.feed("more text") == ()


def test_feed_after_finish_is_misuse() -> None:
    stream = JsonStream()
    stream.feed("{}")
    stream.finish()
    with pytest.raises(UsageError):
        stream.feed("x")


def test_finish_is_idempotent_and_text_is_kept() -> None:
    stream = JsonStream()
    for piece in ['{"a"', ": ", '"b"}']:
        stream.feed(piece)
    assert stream.text == '{"a": "b"}'
    assert stream.finish() is stream.finish()


@pytest.mark.parametrize("size", [10_000, 100_000])
def test_work_is_linear_in_the_input(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Each delta is read once: the parser never rescans old text (peers do, per delta)."""
    scanned = 0
    real_string = JsonStream._string

    def counting_string(self: JsonStream, text: str, i: int) -> int:
        nonlocal scanned
        end = real_string(self, text, i)
        scanned += end - i
        return end

    monkeypatch.setattr(JsonStream, "_string", counting_string)
    body = ('print("caf\u00e9")\n' * size)[:size]
    text = json.dumps({"file_path": "a.py", "content": body})
    stream = JsonStream()
    for i in range(0, len(text), 20):
        stream.feed(text[i : i + 20])
    assert stream.finish().value == json.loads(text)
    # Each character is offered to the string scanner at most once, where a re-parsing
    # peer scans ~len/40 times more.
    assert scanned <= len(text)


def test_absurd_nesting_is_an_error_not_a_crash() -> None:
    text = "[" * 5000 + "]" * 5000
    stream = JsonStream()
    stream.feed(text)
    result = stream.finish()
    assert result.error is not None
    assert result.raw == text

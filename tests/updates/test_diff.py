"""Change detection: by JSON value, deep, with the identity fast path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.updates.diff import changed_fields, same
from toolwire.updates.wire import ToolCallState, encode, encode_content, location, text_content

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (1, True),  # Python: True == 1; JSON: different values
        (0, False),
        (1, 1.0),
        (0.0, -0.0),
        ({"a": [1, 2]}, {"a": [1, True]}),
        ([{"x": 1}], [{"x": 1.0}]),
        ("a", "b"),
        (None, {}),
    ],
)
def test_values_that_python_conflates_are_changes(old: Any, new: Any) -> None:
    assert not same(old, new)


def test_a_change_inside_a_same_length_list_is_detected() -> None:
    old = (text_content("step 1"), text_content("a"))
    new = (text_content("step 2"), text_content("a"))
    assert not same(old, new)
    state = ToolCallState("c", "t", content=old)
    assert changed_fields(state, state.replace(content=new)) == ["content"]


def test_a_change_inside_raw_input_is_detected() -> None:
    state = ToolCallState("c", "t", raw_input={"edits": [{"old": "a", "new": "b"}]})
    edited = state.replace(raw_input={"edits": [{"old": "a", "new": "c"}]})
    assert changed_fields(state, edited) == ["raw_input"]


def test_equal_rebuilt_values_are_not_changes() -> None:
    big = "x" * 2_000_000
    state = ToolCallState("c", "t", content=[text_content(big)], locations=[location("/a", 3)])
    rebuilt = ToolCallState(
        "c", "t", content=[text_content("x" * 2_000_000)], locations=[location("/a", 3)]
    )
    assert rebuilt.content[0] is not state.content[0]
    assert changed_fields(state, rebuilt) == []
    assert changed_fields(state, state) == []


@given(JSON, JSON)
def test_same_is_equality_of_the_json_text(a: Any, b: Any) -> None:
    text_equal = json.loads(encode(a)) == json.loads(encode(b)) and _typed(a) == _typed(b)
    assert same(a, b) == text_equal


@given(JSON)
def test_a_value_is_the_same_as_its_json_copy(a: Any) -> None:
    assert same(a, json.loads(encode(a)))


def _typed(value: Any) -> Any:
    """A form where JSON-distinct values stay distinct (bool vs int vs float, -0.0)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


@given(
    st.lists(
        st.one_of(
            st.text().map(text_content),
            st.fixed_dictionaries({"type": st.just("content"), "content": JSON}),
            st.fixed_dictionaries(
                {"type": st.just("diff"), "path": st.text(), "newText": st.text()}
            ),
        ),
        max_size=3,
    )
)
def test_the_content_fast_path_writes_what_the_encoder_writes(items: list[Any]) -> None:
    value = tuple(items)
    assert json.loads(encode_content(value)) == json.loads(encode(value))
    assert encode_content(value) == encode(value)

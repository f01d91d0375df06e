"""Lone surrogates: every request body encodes, whatever text the history holds.

A prompt or a model's output can carry a lone UTF-16 surrogate (JSON's ``\\ud83d``
escape decodes to one). It must reach the provider as U+FFFD, not fail this request and
every later one of the session.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.backends import encodable, encodable_json
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.base import ModelRequest
from toolwire.backends.gemini import GeminiBackend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.openai_chat import OpenAIChatBackend
from toolwire.backends.openai_responses import OpenAIResponsesBackend
from toolwire.history import (
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    tool_results,
    user,
)

#: Any text, lone and paired surrogates included (hypothesis leaves them out by default).
TEXT = st.text(
    st.one_of(
        st.characters(codec=None, exclude_categories=()),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.sampled_from(["\ud83d", "\ude00", "é", "😀"]),
    ),
    max_size=40,
)
BACKENDS: list[type[HTTPBackend]] = [
    AnthropicBackend,
    OpenAIChatBackend,
    OpenAIResponsesBackend,
    GeminiBackend,
]


def _request(text: str) -> ModelRequest:
    """``text`` everywhere a history carries text: prompt, reply, thinking, call, result."""
    history = [
        user(text),
        Message(
            "assistant",
            (
                ThinkingPart(text, signature="sig"),
                TextPart(text),
                ToolCallPart("toolu_1", "Read", {"file_path": text, text: [text]}),
            ),
            backend="b",
        ),
        tool_results([ToolResultPart("toolu_1", "Read", text)]),
    ]
    spec = ToolSpec("Read", text, {"type": "object", "description": text})
    return ModelRequest(system=text, messages=tuple(history), tools=(spec,), max_tokens=10)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("backend_class", BACKENDS)
@given(text=TEXT)
def test_every_body_encodes_whatever_the_history_holds(
    backend_class: type[HTTPBackend], text: str
) -> None:
    backend = backend_class(name="b", model="m")
    sent = backend.body_text(_request(text)).encode("utf-8")  # what stream() sends
    body = json.loads(sent)
    assert all(s == encodable(s) for s in _strings(body))
    if text and text == encodable(text):
        assert text in _strings(body)  # nothing changes text that already encodes


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    backend = AnthropicBackend(name="b", model="m")
    request = ModelRequest(system="s", messages=(user("hi \ud83d!"),), max_tokens=5)
    body = json.loads(backend.body_text(request).encode("utf-8"))
    assert body["messages"][0]["content"][0]["text"] == "hi \ufffd!"


@given(text=TEXT)
def test_encodable_is_valid_utf8_and_keeps_what_already_was(text: str) -> None:
    clean = encodable(text)
    clean.encode("utf-8")
    assert encodable(clean) == clean
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        assert "\ufffd" in clean or len(clean) < len(text)  # replaced, or a pair joined
    else:
        assert clean is text


def test_a_pair_split_in_two_halves_is_joined() -> None:
    assert encodable("a\ud83d" + "\ude00b") == "a😀b"
    assert encodable("\ude00\ud83d") == "\ufffd\ufffd"


@given(text=TEXT, ascii_escapes=st.booleans())
def test_encodable_json_cleans_every_string_of_a_decoded_body(
    text: str, ascii_escapes: bool
) -> None:
    value = {"messages": [{"content": text, text: [text, {"k": text}]}], "n": 1}
    raw = json.dumps(value, ensure_ascii=ascii_escapes)
    as_bytes = raw.encode("utf-8", "surrogatepass")
    for form in (raw, as_bytes):
        clean = encodable_json(form, json.loads(form))
        assert all(s == encodable(s) for s in _strings(clean))
        json.dumps(clean, ensure_ascii=False).encode("utf-8")


def test_encodable_json_walks_deep_nesting_without_recursion() -> None:
    depth = 900  # what json.loads accepts under the default recursion limit
    raw = "[" * depth + '"\\ud83d"' + "]" * depth
    value = encodable_json(raw, json.loads(raw))
    for _ in range(depth):
        value = value[0]
    assert value == "\ufffd"

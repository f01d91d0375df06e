"""Byte-stable prefixes: each request of a session starts with the previous one's bytes.

Providers cache prompt prefixes (Anthropic at its breakpoints, OpenAI and Gemini
implicitly, from the first token on), so a request whose history grew must serialize
its older part exactly as before: same tools, same system prompt, the earlier messages
as the same bytes. On Anthropic the moving breakpoints are the only difference allowed,
and only in the ``cache_control`` keys. The history also survives the store's JSON form
byte for byte, so a session loaded by another process keeps its cache.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends.base import ModelRequest
from toolwire.handoff import build_handoff
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
from toolwire.history.jsonform import dumps, message_from_dict, message_to_dict

Builder = Callable[..., dict[str, Any]]
# Per provider: the builder, the fields before the history (in the order the provider
# reads them), and the history's field.
PROVIDERS: dict[str, tuple[Builder, tuple[str, ...], str]] = {
    "anthropic": (anthropic.build_body, ("tools", "system"), "messages"),
    "openai-chat": (openai_chat.build_body, ("tools",), "messages"),
    "openai-responses": (openai_responses.build_body, ("tools", "instructions"), "input"),
    "gemini": (gemini.build_body, ("tools", "systemInstruction"), "contents"),
}
FORMATS = ("native", "xml-tags", "hermes", "qwen3-coder")
TOOLS = (
    ToolSpec(
        "Read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolSpec("Bash", "Run a command.", {}),
)
SYSTEM = "You are a coding agent.\nWorking directory: /work/proj"


def _json(value: Any) -> str:
    """As ``HTTPBackend.body_text`` serializes a body."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _body(provider: str, history: list[Message], fmt: str, *, cache: bool) -> dict[str, Any]:
    build = PROVIDERS[provider][0]
    request = ModelRequest(SYSTEM, tuple(history), TOOLS, max_tokens=256, cache=cache)
    return build(request, model="m", backend="b", tool_format=fmt)


def _unmarked(value: Any) -> Any:
    """``value`` without Anthropic's ``cache_control`` keys."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _prefixes(provider: str, earlier: dict[str, Any], later: dict[str, Any]) -> tuple[str, str]:
    """The two requests' histories serialized (breakpoints left out); checks the rest."""
    _, fixed, key = PROVIDERS[provider]
    for name in fixed:
        assert _json(earlier.get(name)) == _json(later.get(name)), name
    return _json(_unmarked(earlier[key])), _json(_unmarked(later[key]))


def _loop(steps: int) -> list[Message]:
    """A prompt, then ``steps`` model turns of thinking, text and Read calls, and results."""
    history = [user("Fix the failing test in src/.")]
    for n in range(steps):
        calls = [
            ToolCallPart(f"toolu_{n}_{i}", "Read", {"path": f"src/m{n}_{i}.py"}, f"gsig-{n}")
            for i in range(1 + n % 3)  # one to three calls, in parallel
        ]
        thinking = ThinkingPart(f"What does m{n} do?", signature=f"sig-{n}")
        history.append(Message("assistant", (thinking, TextPart(f"Reading {n}."), *calls), "b"))
        results = [
            ToolResultPart(c.id, c.name, f"def f{n}():\n    return {n}  # é\n", is_error=n == 3)
            for c in calls
        ]
        history.append(tool_results(results))
    return history


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("cache", [False, True], ids=["plain", "cache"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_tool_loop_request_starts_with_the_bytes_of_the_one_before(
    provider: str, cache: bool, fmt: str
) -> None:
    history = _loop(8)
    for n in range(1, len(history) - 2, 2):  # each request of the loop and the next
        earlier = _body(provider, history[:n], fmt, cache=cache)
        later = _body(provider, history[: n + 2], fmt, cache=cache)
        before, after = _prefixes(provider, earlier, later)
        assert after.startswith(before[:-1] + ","), (provider, n)  # whole items, then more
        assert len(after) > len(before)


@pytest.mark.parametrize("fmt", FORMATS)
def test_anthropic_keeps_the_previous_requests_last_breakpoint_where_it_was(fmt: str) -> None:
    history = _loop(8)
    for n in range(3, len(history) - 2, 2):
        earlier = _body("anthropic", history[:n], fmt, cache=True)["messages"]
        later = _body("anthropic", history[: n + 2], fmt, cache=True)["messages"]
        # The earlier request's newest message, breakpoint and all, is in the later one
        # byte for byte: the later request finds the written prefix at its own breakpoint.
        last = len(earlier) - 1
        assert _json(later[last]) == _json(earlier[last])
        assert "cache_control" in later[last]["content"][-1]
        # What moved: the mark on the message before, and only that key.
        older = [i for i, m in enumerate(earlier[:last]) if "cache_control" in m["content"][-1]]
        assert older == [last - 2]
        assert "cache_control" not in later[last - 2]["content"][-1]
        assert _json(_unmarked(later[: last + 1])) == _json(_unmarked(earlier))


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_after_a_handoff_each_request_still_extends_the_one_before(provider: str) -> None:
    # A switch (and a compaction, a handoff to the same backend) fixes a block at the
    # start; the requests after it share that prefix and grow from it.
    history = _loop(9)
    handoff = build_handoff(history[:7], cwd="/work/proj", target="b")
    for n in range(9, len(history) - 2, 2):
        earlier = _body(provider, handoff.apply(history[:n]), "native", cache=True)
        later = _body(provider, handoff.apply(history[: n + 2]), "native", cache=True)
        before, after = _prefixes(provider, earlier, later)
        assert after.startswith(before[:-1] + ",")


# -- any conversation, including prompts after cancelled turns ----------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Turns of a prompt, tool steps, and a closing answer unless the turn was cut short."""
    history: list[Message] = []
    for t in range(draw(st.integers(1, 3))):
        history.append(user(draw(TEXT)))
        for s in range(draw(st.integers(0, 3))):
            calls = [
                ToolCallPart(
                    draw(st.sampled_from([f"id{t}{s}{i}", "call_0", "a.b/c"])),
                    draw(st.sampled_from(["Read", "Bash"])),
                    draw(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3)),
                    draw(st.none() | st.just("gsig")),
                )
                for i in range(draw(st.integers(1, 3)))
            ]
            thinking = draw(
                st.lists(
                    st.builds(ThinkingPart, TEXT, st.none() | st.just("sig"), st.none()), max_size=1
                )
            )
            text = [TextPart(x) for x in draw(st.lists(TEXT, max_size=2))]
            history.append(Message("assistant", (*thinking, *text, *calls), "b"))
            results = [
                ToolResultPart(c.id, c.name, draw(TEXT), is_error=draw(st.booleans()))
                for c in calls
            ]
            history.append(tool_results(results))
        if draw(st.booleans()):
            history.append(Message("assistant", (TextPart(draw(TEXT)),), "b"))
    return history


def _stored(history: list[Message]) -> list[Message]:
    """``history`` after a round trip through the store's JSON form."""
    return [message_from_dict(json.loads(dumps(message_to_dict(m)))) for m in history]


@settings(max_examples=60, deadline=None)
@given(history=conversations(), fmt=st.sampled_from(FORMATS), cache=st.booleans())
def test_every_request_of_a_conversation_extends_the_bytes_of_every_earlier_one(
    history: list[Message], fmt: str, cache: bool
) -> None:
    # A request is sent whenever the history ends on the user's side.
    cuts = [n for n in range(1, len(history) + 1) if history[n - 1].role != "assistant"]
    for provider in PROVIDERS:
        bodies = [_body(provider, history[:n], fmt, cache=cache) for n in cuts]
        for earlier, later in itertools.pairwise(bodies):
            before, after = _prefixes(provider, earlier, later)
            # A prompt after a cut-short turn may join the results' message (Anthropic,
            # Gemini): the earlier bytes then end inside it, before its closing brackets.
            assert after.startswith(before.rstrip("]}"))
        # Loaded from the store (another process, a restart): the very same bytes.
        stored = _body(provider, _stored(history), fmt, cache=cache)
        assert _json(stored) == _json(_body(provider, history, fmt, cache=cache))

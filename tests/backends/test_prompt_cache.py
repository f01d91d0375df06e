"""Anthropic prompt-cache breakpoints: where the agent's requests carry ``cache_control``.

Placement: the last tool, the system prompt, the last block of the last message and of
the last user message before it; at most four; never on a thinking block or an empty
text block; none at all unless the request asks (``ModelRequest.cache``), so the proxy
and the handoff summarizer send what they sent before.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic.types as sdk
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.backends import anthropic
from toolwire.backends.anthropic import CACHE_CONTROL, MAX_BREAKPOINTS, AnthropicBackend
from toolwire.backends.base import ModelRequest
from toolwire.config.choices import ToolFormat
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
from toolwire.proxy.translate import to_model_request

TOOLS = (
    ToolSpec(
        "Read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolSpec("Bash", "Run a command.", {}),
)
SYSTEM = "You are a coding agent."

# What the SDK's request types allow on each block a breakpoint may sit on: a marked
# block must be one whose type declares ``cache_control``, with no key it does not know.
SDK_BLOCKS: dict[str, Any] = {
    "text": sdk.TextBlockParam,
    "tool_use": sdk.ToolUseBlockParam,
    "tool_result": sdk.ToolResultBlockParam,
    "thinking": sdk.ThinkingBlockParam,
    "redacted_thinking": sdk.RedactedThinkingBlockParam,
}


def _loop(steps: int) -> list[Message]:
    """A prompt, then ``steps`` Read calls (thinking, text, a call) and their results."""
    history = [user("Fix the failing test.")]
    for n in range(steps):
        call = ToolCallPart(f"toolu_{n}", "Read", {"path": f"src/m{n}.py"})
        thinking = ThinkingPart(f"step {n}", signature=f"sig-{n}")
        history.append(Message("assistant", (thinking, TextPart(f"Reading m{n}."), call), "b"))
        history.append(tool_results([ToolResultPart(call.id, "Read", f"contents {n}")]))
    return history


def _body(
    history: list[Message], *, cache: bool = True, system: str = SYSTEM, fmt: ToolFormat = "native"
) -> dict[str, Any]:
    request = ModelRequest(system, tuple(history), TOOLS, max_tokens=64, cache=cache)
    return anthropic.build_body(request, model="claude-x", backend="b", tool_format=fmt)


def _marked(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where the breakpoints are: ``(section, index, block index)``."""
    found = [("tools", i, 0) for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [("system", 0, i) for i, b in enumerate(system) if "cache_control" in b]
    for m, message in enumerate(body["messages"]):
        found += [
            ("messages", m, b)
            for b, block in enumerate(message["content"])
            if "cache_control" in block
        ]
    return found


def _check_shapes(body: dict[str, Any]) -> None:
    """Every breakpoint is ``{"type": "ephemeral"}`` on a block the SDK lets carry one."""
    text = json.dumps(body)
    assert text.count('"cache_control"') == len(_marked(body)) <= MAX_BREAKPOINTS
    blocks = [b for m in body["messages"] for b in m["content"]]
    blocks += body["system"] if isinstance(body.get("system"), list) else []
    for block in blocks:
        allowed = SDK_BLOCKS[block["type"]].__annotations__
        assert set(block) <= set(allowed), block
        if "cache_control" in block:
            assert block["cache_control"] == CACHE_CONTROL
            assert "cache_control" in allowed
            assert block.get("text") != ""
    for tool in body.get("tools", []):
        assert set(tool) <= set(sdk.ToolParam.__annotations__)
    assert set(CACHE_CONTROL) <= set(sdk.CacheControlEphemeralParam.__annotations__)


def test_a_tool_loop_marks_the_tools_the_system_and_the_two_latest_user_messages() -> None:
    body = _body(_loop(3))
    assert _marked(body) == [
        ("tools", 1, 0),  # the last tool: every tool definition is cached
        ("system", 0, 0),
        ("messages", 4, 0),  # the results of the previous request's last call
        ("messages", 6, 0),  # the newest results
    ]
    assert body["system"] == [{"type": "text", "text": SYSTEM, "cache_control": CACHE_CONTROL}]
    assert body["messages"][6]["content"][0]["type"] == "tool_result"
    _check_shapes(body)


def test_the_first_request_has_three_breakpoints_and_no_system_none_for_it() -> None:
    assert _marked(_body(_loop(0))) == [("tools", 1, 0), ("system", 0, 0), ("messages", 0, 0)]
    body = _body(_loop(1), system="")
    assert "system" not in body
    assert _marked(body) == [("tools", 1, 0), ("messages", 0, 0), ("messages", 2, 0)]


def test_without_cache_the_body_is_what_it_was_and_the_marks_are_the_only_difference() -> None:
    history = _loop(4)
    plain, cached = _body(history, cache=False), _body(history)
    assert "cache_control" not in json.dumps(plain)
    assert plain["system"] == SYSTEM  # a plain string, as always
    for block in [*cached["tools"], *(b for m in cached["messages"] for b in m["content"])]:
        block.pop("cache_control", None)
    cached["system"] = cached["system"][0]["text"]
    assert json.dumps(cached) == json.dumps(plain)


def test_the_proxy_and_a_default_request_ask_for_no_breakpoints() -> None:
    body = {"model": "m", "max_tokens": 10, "system": SYSTEM, "messages": []}
    assert to_model_request(body, _loop(2)).cache is False
    assert ModelRequest(SYSTEM, tuple(_loop(2))).cache is False
    text = AnthropicBackend(name="b", model="m").body_text(ModelRequest(SYSTEM, tuple(_loop(2))))
    assert "cache_control" not in text


def test_a_thinking_block_is_passed_over_for_the_block_before_it() -> None:
    # A history that ends on the model's turn (what a prefill would look like): its last
    # block is signed thinking, which cannot carry cache_control.
    last = Message("assistant", (TextPart("So far:"), ThinkingPart("hmm", signature="s")), "b")
    body = _body([*_loop(1), user("go on"), last])
    assert _marked(body)[-2:] == [("messages", 2, 1), ("messages", 3, 0)]
    assert body["messages"][3]["content"][1]["type"] == "thinking"
    _check_shapes(body)
    only_thinking = Message("assistant", (ThinkingPart("hmm", signature="s"),), "b")
    body = _body([user("hi"), only_thinking])
    assert _marked(body) == [("tools", 1, 0), ("system", 0, 0), ("messages", 0, 0)]


def test_parallel_results_and_a_prompt_after_them_mark_the_last_block() -> None:
    calls = [ToolCallPart(f"c{i}", "Bash", {"command": f"echo {i}"}) for i in range(3)]
    history = [
        user("run them"),
        Message("assistant", tuple(calls), "b"),
        tool_results([ToolResultPart(c.id, c.name, "") for c in calls]),  # empty results
        user("and now?"),  # after a cancelled turn: merged into the results' message
    ]
    body = _body(history)
    assert len(body["messages"]) == 3
    assert _marked(body)[-2:] == [("messages", 0, 0), ("messages", 2, 3)]
    assert body["messages"][2]["content"][3] == {
        "type": "text",
        "text": "and now?",
        "cache_control": CACHE_CONTROL,
    }
    _check_shapes(body)


def test_text_tool_formats_mark_the_system_prompt_that_holds_the_tools() -> None:
    body = _body(_loop(2), fmt="xml-tags")
    assert "tools" not in body
    assert body["system"][0]["text"].startswith(SYSTEM + "\n\n# Tools")
    assert _marked(body) == [("system", 0, 0), ("messages", 2, 0), ("messages", 4, 0)]
    _check_shapes(body)


def test_an_empty_history_marks_tools_and_system_only() -> None:
    assert _marked(_body([])) == [("tools", 1, 0), ("system", 0, 0)]


def test_a_request_without_tools_or_system_may_still_mark_messages() -> None:
    request = ModelRequest("", tuple(_loop(1)), cache=True)
    body = anthropic.build_body(request, model="m", backend="b")
    assert _marked(body) == [("messages", 0, 0), ("messages", 2, 0)]


@pytest.mark.parametrize("steps", [0, 1, 2, 10])
def test_the_backend_sends_the_breakpoints_it_built(steps: int) -> None:
    backend = AnthropicBackend(name="b", model="m")
    request = ModelRequest(SYSTEM, tuple(_loop(steps)), TOOLS, cache=True)
    sent = json.loads(backend.body_text(request))
    assert _marked(sent) == _marked(_body(_loop(steps)))


PART = st.one_of(
    st.builds(TextPart, st.sampled_from(["", "text", "more text"])),
    st.builds(ThinkingPart, st.just("t"), st.sampled_from([None, "sig"])),
    st.builds(ThinkingPart, st.just(""), st.none(), st.just("opaque")),
)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Any shape: prompts (maybe empty), model turns of text, thinking and calls, results."""
    history: list[Message] = []
    for n in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "tool"]))
        if kind == "user":
            history.append(user(draw(st.sampled_from(["", "prompt"]))))
            continue
        parts: list[Any] = draw(st.lists(PART, max_size=3))
        calls = [ToolCallPart(f"c{n}_{i}", "Read", {}) for i in range(draw(st.integers(0, 3)))]
        history.append(Message("assistant", (*parts, *calls), "b"))
        if calls and kind == "tool":
            content = draw(st.sampled_from(["", "out"]))
            history.append(tool_results([ToolResultPart(c.id, c.name, content) for c in calls]))
    return history


@settings(max_examples=300, deadline=None)
@given(history=histories(), tools=st.booleans(), system=st.sampled_from(["", SYSTEM]))
def test_any_history_gets_at_most_four_valid_breakpoints(
    history: list[Message], tools: bool, system: str
) -> None:
    request = ModelRequest(system, tuple(history), TOOLS if tools else (), cache=True)
    body = anthropic.build_body(request, model="m", backend="b")
    _check_shapes(body)
    marked = _marked(body)
    fixed = ["tools"] * tools + ["system"] * bool(system)
    assert [section for section, _, _ in marked if section != "messages"] == fixed
    messages = body["messages"]
    thinking = ("thinking", "redacted_thinking")
    if messages and any(b["type"] not in thinking for b in messages[-1]["content"]):
        assert marked[-1][1] == len(messages) - 1  # the newest message always carries one

"""The scripted fake upstream the real-CLI tests use (``tests/fakes/scripted.py``) refuses
what the real APIs refuse, so a CLI test that passes saw only valid requests."""

from __future__ import annotations

from typing import Any

from tests.fakes.scripted import anthropic_problems, chat_problems

USE = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "x"}
CALL = {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}


def _anthropic(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "stream": True, "messages": list(messages)}


def _chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "messages": list(messages)}


def test_a_valid_tool_loop_passes_in_both_families() -> None:
    user = {"role": "user", "content": "hi"}
    assert (
        anthropic_problems(
            _anthropic(
                user,
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": [RESULT]},
            )
        )
        == []
    )
    calls = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    tool = {"role": "tool", "tool_call_id": "c1", "content": "x"}
    assert chat_problems(_chat(user, calls, tool)) == []


def test_what_anthropic_refuses_is_refused() -> None:
    user = {"role": "user", "content": "hi"}
    unanswered = _anthropic(user, {"role": "assistant", "content": [USE]}, user)
    assert anthropic_problems(unanswered)
    assert anthropic_problems(_anthropic({"role": "assistant", "content": "hi"}))
    assert anthropic_problems(_anthropic({"role": "user", "content": [{"type": "text"}]}))
    assert anthropic_problems({"model": "m", "messages": [user]})  # no max_tokens


def test_what_chat_completions_refuses_is_refused() -> None:
    user = {"role": "user", "content": "hi"}
    orphan = {"role": "tool", "tool_call_id": "c9", "content": "x"}
    assert chat_problems(_chat(user, orphan))
    calls = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    assert chat_problems(_chat(user, calls, user))  # the call never answered
    assert chat_problems(_chat({"role": "robot", "content": "hi"}))
    bad_tool = {"type": "function", "function": {"name": "a b", "parameters": {}}}
    assert chat_problems({**_chat(user), "tools": [bad_tool]})

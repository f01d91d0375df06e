"""``ModelRequest.thinking`` in each provider's body, and reasoning sent back to its own."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.agent.turn.collect import ResponseCollector
from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends._thinking import ANTHROPIC_BUDGETS, GEMINI_BUDGETS
from toolwire.backends.base import ModelRequest
from toolwire.decode.openai_responses import OpenAIResponsesDecoder
from toolwire.history import (
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    tool_results,
    user,
)

LEVELS = ("low", "medium", "high")


def _request(level: str = "off", **extra: Any) -> ModelRequest:
    options: dict[str, Any] = {"max_tokens": 32_000, **extra}
    return ModelRequest("be brief", (user("hi"),), thinking=level, **options)  # type: ignore[arg-type]


def _bodies(request: ModelRequest) -> dict[str, dict[str, Any]]:
    return {
        "anthropic": anthropic.build_body(request, model="m", backend="b"),
        "chat": openai_chat.build_body(request, model="m", backend="b", official=True),
        "responses": openai_responses.build_body(request, model="m", backend="b"),
        "gemini": gemini.build_body(request, model="m", backend="b"),
    }


def test_off_adds_nothing() -> None:
    default = ModelRequest("be brief", (user("hi"),), max_tokens=32_000)
    assert _bodies(_request("off")) == _bodies(default)
    for body in _bodies(default).values():
        assert not {"thinking", "reasoning", "reasoning_effort", "include"} & set(body)
        assert "thinkingConfig" not in body.get("generationConfig", {})


@pytest.mark.parametrize("level", LEVELS)
def test_each_level_per_provider(level: str) -> None:
    bodies = _bodies(_request(level, temperature=0.2))
    budget = ANTHROPIC_BUDGETS[level]
    assert bodies["anthropic"]["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert "temperature" not in bodies["anthropic"]  # refused together with thinking
    assert bodies["chat"]["reasoning_effort"] == level
    assert bodies["responses"]["reasoning"] == {"effort": level, "summary": "auto"}
    assert bodies["responses"]["include"] == ["reasoning.encrypted_content"]
    assert bodies["responses"]["store"] is False
    config = bodies["gemini"]["generationConfig"]
    assert config["thinkingConfig"] == {
        "thinkingBudget": GEMINI_BUDGETS[level],
        "includeThoughts": True,
    }


def test_anthropic_budget_leaves_room_for_the_answer() -> None:
    body = anthropic.build_body(_request("high", max_tokens=8192), model="m", backend="b")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192 - 1024}
    small = anthropic.build_body(_request("low", max_tokens=1500), model="m", backend="b")
    assert "thinking" not in small  # not even the API's minimum fits


def _loop(*, thought: bool) -> tuple[Message, ...]:
    parts = (ThinkingPart("look", signature="sig"),) if thought else ()
    call = ToolCallPart("toolu_1", "Read", {"file_path": "a.py"})
    return (
        user("fix"),
        Message("assistant", (*parts, TextPart("Reading."), call), backend="b"),
        tool_results([ToolResultPart("toolu_1", "Read", "A = 1")]),
    )


def test_anthropic_tool_loop_without_thinking_is_sent_without_it() -> None:
    """A call made without thinking (thinking turned on mid-turn, a compacted tail):
    the API would want the assistant message to start with a thinking block."""
    bare = ModelRequest("s", _loop(thought=False), max_tokens=32_000, thinking="medium")
    assert "thinking" not in anthropic.build_body(bare, model="m", backend="b")
    signed = ModelRequest("s", _loop(thought=True), max_tokens=32_000, thinking="medium")
    body = anthropic.build_body(signed, model="m", backend="b")
    assert body["thinking"]["budget_tokens"] == ANTHROPIC_BUDGETS["medium"]
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "look",
        "signature": "sig",
    }


REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Plan: read a.py."}],
    "encrypted_content": "gAAAA-opaque",
}


def _responses_turn() -> Message:
    """A Responses stream with a reasoning item and a call, collected as history."""
    decoder, collector = OpenAIResponsesDecoder(), ResponseCollector()
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "Read"}
    payloads: list[tuple[str, dict[str, Any]]] = [
        ("response.output_item.added", {"output_index": 0, "item": {**REASONING, "summary": []}}),
        (
            "response.reasoning_summary_text.delta",
            {"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Plan: "},
        ),
        (
            "response.reasoning_summary_text.delta",
            {"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "read a.py."},
        ),
        ("response.output_item.done", {"output_index": 0, "item": REASONING}),
        ("response.output_item.added", {"output_index": 1, "item": {**call, "arguments": ""}}),
        (
            "response.output_item.done",
            {"output_index": 1, "item": {**call, "arguments": '{"file_path":"a.py"}'}},
        ),
        ("response.completed", {"response": {"status": "completed", "output": []}}),
    ]
    for name, payload in payloads:
        for event in decoder.feed_payload({"type": name, **payload}, event=name):
            collector.feed(event)
    message = collector.message("resp")
    assert message is not None
    assert collector.thinking() == "Plan: read a.py."
    return message


def test_responses_reasoning_goes_back_to_its_own_backend_only() -> None:
    turn = _responses_turn()
    result = tool_results([ToolResultPart(turn.tool_calls()[0].id, "Read", "A = 1")])
    request = ModelRequest("s", (user("fix"), turn, result), thinking="high")
    own = openai_responses.build_body(request, model="m", backend="resp")["input"]
    assert [item["type"] for item in own] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert own[1] == REASONING  # whole, as the API gave it
    other = openai_responses.build_body(request, model="m", backend="another")["input"]
    assert [item["type"] for item in other] == ["message", "function_call", "function_call_output"]
    claude = anthropic.build_body(request, model="m", backend="another")
    assert all(b["type"] != "redacted_thinking" for m in claude["messages"] for b in m["content"])

"""Request builders: history -> each provider's JSON body (pure, no HTTP)."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends.base import ModelRequest
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
from toolwire.history.pairing import NOT_RUN, IdMap, repair

READ = ToolSpec(
    "Read", "Read a file.", {"type": "object", "properties": {"file_path": {"type": "string"}}}
)


def _turn(backend: str = "claude") -> list[Message]:
    """A prompt, an assistant turn with thinking, text and two calls, results out of order."""
    return [
        user("fix the bug"),
        Message(
            "assistant",
            (
                ThinkingPart("let me look", signature="sig-1"),
                TextPart("Reading both."),
                ToolCallPart("toolu_01", "Read", {"file_path": "a.py"}),
                ToolCallPart("call.2/x", "Read", {"file_path": "b.py"}),
            ),
            backend=backend,
        ),
        tool_results(
            [
                ToolResultPart("call.2/x", "Read", "b contents"),
                ToolResultPart("toolu_01", "Read", "no such file", is_error=True),
            ]
        ),
        user("and then?"),
    ]


def _request(messages: list[Message], tools: tuple[ToolSpec, ...] = (READ,)) -> ModelRequest:
    return ModelRequest(system="be brief", messages=tuple(messages), tools=tools, max_tokens=100)


# -- shared repair ---------------------------------------------------------------------


def test_repair_answers_every_call_in_call_order_and_keeps_orphans_as_text() -> None:
    history = [
        user("go"),
        Message("assistant", (ToolCallPart("a", "Read", {}), ToolCallPart("b", "Bash", {}))),
        tool_results([ToolResultPart("b", "Bash", "ok"), ToolResultPart("zz", "Grep", "lost")]),
    ]
    fixed = repair(history)
    assert [m.role for m in fixed] == ["user", "assistant", "tool", "user"]
    results = fixed[2].parts
    assert [(r.call_id, r.content, r.is_error) for r in results] == [  # type: ignore[union-attr]
        ("a", NOT_RUN, True),
        ("b", "ok", False),
    ]
    assert "lost" in fixed[3].text()


def test_id_map_is_deterministic_and_collision_free() -> None:
    ids = IdMap(40)
    first = ids.turn(["call.1", "call_1", "x" * 80])
    assert first[0] == "call_1"
    assert first[1] == "call_1_2"  # the same after cleaning: made unique
    assert len(first[2]) == 40
    assert first == IdMap(40).turn(["call.1", "call_1", "x" * 80])
    assert ids.turn(["call.1"]) == ["call_1_3"]  # a later turn repeating an id


# -- Anthropic -------------------------------------------------------------------------


def _anthropic(messages: list[Message], **kw: Any) -> dict[str, Any]:
    return anthropic.build_body(_request(messages), model="claude-x", backend="claude", **kw)


def test_anthropic_pairs_results_first_in_call_order_with_normalized_ids() -> None:
    body = _anthropic(_turn())
    assert body["system"] == "be brief"
    assert body["stream"] is True
    assert body["tools"] == [
        {"name": "Read", "description": "Read a file.", "input_schema": READ.input_schema}
    ]
    assistant, results = body["messages"][1], body["messages"][2]
    uses = [b for b in assistant["content"] if b["type"] == "tool_use"]
    assert [u["id"] for u in uses] == ["toolu_01", "call_2_x"]
    assert results["role"] == "user"
    assert results["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": "no such file",
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "call_2_x", "content": "b contents"},
        {"type": "text", "text": "and then?"},  # the next prompt shares the message, after
    ]
    assert len(body["messages"]) == 3


def test_anthropic_sends_thinking_only_to_its_own_backend() -> None:
    own = _anthropic(_turn("claude"))["messages"][1]["content"]
    assert own[0] == {"type": "thinking", "thinking": "let me look", "signature": "sig-1"}
    other = _anthropic(_turn("glm"))["messages"][1]["content"]
    assert [b["type"] for b in other] == ["text", "tool_use", "tool_use"]


def test_anthropic_never_invents_a_signature_and_keeps_redacted_thinking() -> None:
    history = [
        user("hi"),
        Message(
            "assistant",
            (ThinkingPart("unsigned"), ThinkingPart("", redacted="opaque"), TextPart("hello")),
            backend="claude",
        ),
    ]
    blocks = _anthropic(history)["messages"][1]["content"]
    assert blocks == [
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "hello"},
    ]


def test_anthropic_answers_an_unanswered_call_and_drops_empty_messages() -> None:
    history = [
        user("go"),
        Message("assistant", (ThinkingPart("x", signature="s"),), backend="other"),
        user("again"),
        Message("assistant", (ToolCallPart("t1", "Read", "not json"),), backend="claude"),
    ]
    messages = _anthropic(history)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "go"},
        {"type": "text", "text": "again"},
    ]
    assert messages[1]["content"][0]["input"] == {"INVALID_JSON": "not json"}
    assert messages[2]["content"][0]["is_error"] is True


# -- OpenAI Chat -----------------------------------------------------------------------


def test_openai_chat_tool_messages_follow_the_assistant_in_call_order() -> None:
    body = openai_chat.build_body(_request(_turn()), model="gpt", backend="gpt")
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = body["messages"][2]
    assert assistant["content"] == "Reading both."
    assert "reasoning_content" not in assistant  # thinking of another backend
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_01", "call_2_x"]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "Read",
        "arguments": '{"file_path":"a.py"}',
    }
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "toolu_01",
        "content": "Error: no such file",
    }
    assert body["messages"][4]["tool_call_id"] == "call_2_x"
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100
    assert body["tools"][0]["function"]["parameters"] == READ.input_schema


def test_openai_chat_ids_fit_40_chars_and_own_reasoning_goes_back() -> None:
    long_id = "gemini-" + "r" * 60 + "-0"
    history = [
        user("go"),
        Message(
            "assistant",
            (ThinkingPart("hmm"), ToolCallPart(long_id, "Read", {})),
            backend="deepseek",
        ),
        tool_results([ToolResultPart(long_id, "Read", "")]),
    ]
    body = openai_chat.build_body(_request(history), model="m", backend="deepseek", official=True)
    assistant, tool = body["messages"][2], body["messages"][3]
    assert assistant["content"] is None
    assert assistant["reasoning_content"] == "hmm"
    assert len(assistant["tool_calls"][0]["id"]) <= 40
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body


# -- OpenAI Responses ------------------------------------------------------------------


def test_openai_responses_items_pair_calls_and_outputs() -> None:
    body = openai_responses.build_body(_request(_turn("gpt")), model="gpt", backend="gpt")
    assert body["instructions"] == "be brief"
    assert body["store"] is False
    kinds = [(i["type"], i.get("role")) for i in body["input"]]
    assert kinds == [
        ("message", "user"),
        ("message", "assistant"),
        ("function_call", None),
        ("function_call", None),
        ("function_call_output", None),
        ("function_call_output", None),
        ("message", "user"),
    ]
    calls, outputs = body["input"][2:4], body["input"][4:6]
    assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs]
    assert outputs[0]["output"] == "Error: no such file"
    assert body["tools"][0] == {
        "type": "function",
        "name": "Read",
        "description": "Read a file.",
        "parameters": READ.input_schema,
        "strict": False,
    }
    assert all(i["type"] != "reasoning" for i in body["input"])


# -- Gemini ----------------------------------------------------------------------------


def _gemini_turn(backend: str) -> list[Message]:
    return [
        user("weather?"),
        Message(
            "assistant",
            (
                TextPart("Checking."),
                ThinkingPart("", signature="text-sig"),
                ToolCallPart("gemini-resp1-0", "weather", {"city": "Paris"}, signature="call-sig"),
                ToolCallPart("fc_7", "weather", {"city": "Rome"}),
            ),
            backend=backend,
        ),
        tool_results(
            [
                ToolResultPart("gemini-resp1-0", "weather", "sunny"),
                ToolResultPart("fc_7", "weather", "down", is_error=True),
            ]
        ),
    ]


def test_gemini_echoes_signatures_and_ids_only_to_its_own_backend() -> None:
    body = gemini.build_body(_request(_gemini_turn("gem")), model="g", backend="gem")
    assert body["systemInstruction"] == {"parts": [{"text": "be brief"}]}
    assert body["generationConfig"] == {"maxOutputTokens": 100}
    model, answer = body["contents"][1], body["contents"][2]
    assert model["role"] == "model"
    assert model["parts"][0] == {"text": "Checking.", "thoughtSignature": "text-sig"}
    assert model["parts"][1] == {
        "functionCall": {"name": "weather", "args": {"city": "Paris"}},  # minted id: not sent
        "thoughtSignature": "call-sig",
    }
    assert model["parts"][2] == {
        "functionCall": {"name": "weather", "args": {"city": "Rome"}, "id": "fc_7"}
    }
    assert answer == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"output": "sunny"}}},
            {"functionResponse": {"name": "weather", "response": {"error": "down"}, "id": "fc_7"}},
        ],
    }


def test_gemini_never_invents_signatures_for_another_backends_calls() -> None:
    body = gemini.build_body(_request(_gemini_turn("claude")), model="g", backend="gem")
    parts = body["contents"][1]["parts"]
    assert parts == [
        {"text": "Checking."},
        {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
    ]
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "Read", "description": "Read a file.", "parameters": READ.input_schema}
            ]
        }
    ]


def test_gemini_thought_parts_keep_their_signature() -> None:
    history = [
        user("q"),
        Message("assistant", (ThinkingPart("pondering", signature="s1"), TextPart("A")), "gem"),
    ]
    parts = gemini.build_body(_request(history), model="g", backend="gem")["contents"][1]["parts"]
    assert parts == [
        {"text": "pondering", "thought": True, "thoughtSignature": "s1"},
        {"text": "A"},
    ]


@pytest.mark.parametrize(
    "build", [anthropic.build_body, openai_responses.build_body, gemini.build_body]
)
def test_temperature_is_sent_only_when_set(build: Any) -> None:
    plain = build(_request([user("x")]), model="m", backend="b")
    warm = build(
        ModelRequest("s", (user("x"),), max_tokens=5, temperature=0.5), model="m", backend="b"
    )
    assert "temperature" not in str(plain)
    assert "0.5" in str(warm)

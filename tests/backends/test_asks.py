"""What a request asks of the answer (a required call, stop sequences, JSON output) in
each builder's body: the wire's own field where it has one, a line of the system prompt
where it has none, and nothing at all when nothing is asked (the agent's requests)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends.base import ModelRequest, OutputFormat, ToolChoice
from toolwire.history import ToolSpec, user

# A name Gemini and OpenAI refuse as it is (a dot): the forced call must name the wire's.
READ = ToolSpec(
    "fs.read", "Read a file.", {"type": "object", "properties": {"p": {"type": "string"}}}
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}


def _request(**asks: Any) -> ModelRequest:
    base = ModelRequest(system="be brief", messages=(user("weather?"),), tools=(READ,))
    return replace(base, **asks)


def _bodies(request: ModelRequest, tool_format: Any = "native") -> dict[str, dict[str, Any]]:
    kw: dict[str, Any] = {"model": "m", "backend": "b", "tool_format": tool_format}
    return {
        "anthropic": anthropic.build_body(request, **kw),
        "chat": openai_chat.build_body(request, **kw),
        "responses": openai_responses.build_body(request, **kw),
        "gemini": gemini.build_body(request, **kw),
    }


def _wire_name(body: dict[str, Any], family: str) -> str:
    if family == "gemini":
        return str(body["tools"][0]["functionDeclarations"][0]["name"])
    tool = body["tools"][0]
    return str(tool.get("function", tool)["name"])


def test_a_required_call_of_any_tool_in_each_wire() -> None:
    bodies = _bodies(_request(tool_choice=ToolChoice()))
    assert bodies["anthropic"]["tool_choice"] == {"type": "any"}
    assert bodies["chat"]["tool_choice"] == "required"
    assert bodies["responses"]["tool_choice"] == "required"
    assert bodies["gemini"]["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def test_a_named_call_names_the_tool_as_the_wire_knows_it() -> None:
    bodies = _bodies(_request(tool_choice=ToolChoice("fs.read")))
    anthropic_name, chat_name = (
        _wire_name(bodies["anthropic"], "a"),
        _wire_name(bodies["chat"], "c"),
    )
    gemini_name = _wire_name(bodies["gemini"], "gemini")
    assert bodies["anthropic"]["tool_choice"] == {"type": "tool", "name": anthropic_name}
    assert bodies["chat"]["tool_choice"] == {"type": "function", "function": {"name": chat_name}}
    assert bodies["responses"]["tool_choice"] == {
        "type": "function",
        "name": _wire_name(bodies["responses"], "r"),
    }
    assert bodies["gemini"]["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY",
        "allowedFunctionNames": [gemini_name],
    }
    assert chat_name != "fs.read"  # the rewritten name, not the offered one


def test_a_forced_call_leaves_anthropic_thinking_out() -> None:
    body = anthropic.build_body(
        _request(tool_choice=ToolChoice(), thinking="high"), model="m", backend="b"
    )
    assert body["tool_choice"] == {"type": "any"}
    assert "thinking" not in body  # the API refuses thinking beside a forced call


def test_stop_sequences_in_each_wire_that_has_them() -> None:
    bodies = _bodies(_request(stop=("END", "\n\n")))
    assert bodies["anthropic"]["stop_sequences"] == ["END", "\n\n"]
    assert bodies["chat"]["stop"] == ["END", "\n\n"]
    assert bodies["gemini"]["generationConfig"]["stopSequences"] == ["END", "\n\n"]
    assert "stop" not in bodies["responses"]  # the Responses API has none


def test_a_json_schema_output_in_each_wire() -> None:
    output = OutputFormat(SCHEMA, "weather", strict=True)
    bodies = _bodies(_request(output=output))
    assert bodies["chat"]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
    }
    assert bodies["responses"]["text"] == {
        "format": {"type": "json_schema", "name": "weather", "schema": SCHEMA, "strict": True}
    }
    config = bodies["gemini"]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["type"] == "object"
    assert set(config["responseSchema"]["properties"]) == {"city", "days"}
    # Anthropic's wire takes no output format here: the system prompt asks for it.
    assert "JSON Schema" in bodies["anthropic"]["system"]
    assert '"city"' in bodies["anthropic"]["system"]
    for family in ("chat", "responses", "gemini"):
        assert "JSON" not in str(bodies[family].get("system", "")), family


def test_a_json_object_output_and_a_schema_gemini_cannot_say() -> None:
    bodies = _bodies(_request(output=OutputFormat()))
    assert bodies["chat"]["response_format"] == {"type": "json_object"}
    assert bodies["responses"]["text"] == {"format": {"type": "json_object"}}
    assert bodies["gemini"]["generationConfig"]["responseMimeType"] == "application/json"
    assert "one JSON object" in bodies["anthropic"]["system"]
    free_map: dict[str, Any] = {"type": "object", "additionalProperties": True}
    config = _bodies(_request(output=OutputFormat(free_map)))["gemini"]["generationConfig"]
    assert config["responseJsonSchema"] == free_map
    assert "responseSchema" not in config


@pytest.mark.parametrize("family", ["chat", "responses", "gemini"])
def test_text_format_tools_are_asked_in_the_prompt(family: str) -> None:
    """No wire can force a call written as text, and a JSON-only wire field would forbid
    the call markup: both become lines of the system prompt."""
    asked = _request(tool_choice=ToolChoice("fs.read"), output=OutputFormat(SCHEMA))
    body = _bodies(asked, "hermes")[family]
    system = json_text(body)
    assert "you must call the tool fs.read" in system
    assert "matching this JSON Schema" in system
    assert not {"tool_choice", "toolConfig", "response_format", "text"} & set(body)
    # Without tools, the wire's own JSON field is sent.
    bare = _bodies(replace(asked, tools=(), tool_choice=None), "hermes")[family]
    assert {"response_format", "text", "generationConfig"} & set(bare)
    assert "JSON Schema" not in json_text(bare)


def json_text(body: dict[str, Any]) -> str:
    """The system prompt of any wire's body."""
    system = body.get("system") or body.get("instructions")
    if system is None and "systemInstruction" in body:
        system = body["systemInstruction"]["parts"][0]["text"]
    if system is None:
        system = body["messages"][0]["content"]
    return str(system)


def test_nothing_asked_adds_nothing() -> None:
    plain = _bodies(_request())
    for body in plain.values():
        assert not {"tool_choice", "toolConfig", "stop", "stop_sequences", "response_format"} & set(
            body
        )
        assert "text" not in body
    assert set(plain["gemini"]["generationConfig"]) == {"maxOutputTokens"}

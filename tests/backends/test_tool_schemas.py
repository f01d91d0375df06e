"""MCP and Claude Code tool definitions, as each provider's builder emits them.

Every emitted definition is checked against the provider's documented rules
(``gemini_rules``, ``tool_rules``: written from the docs; the OpenAI and Anthropic SDKs'
typed params as a second opinion), and the built-in tools go out byte for byte as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.backends import gemini_rules, schema_samples, tool_rules
from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends._gemini_schema import declaration_schema
from toolwire.backends.base import ModelRequest
from toolwire.history import ToolSpec, user
from toolwire.tools import tool_specs

Build = Callable[[ModelRequest], dict[str, Any]]


def _request(tools: list[ToolSpec]) -> ModelRequest:
    return ModelRequest(system="s", messages=(user("hi"),), tools=tuple(tools))


def _anthropic(request: ModelRequest) -> dict[str, Any]:
    return anthropic.build_body(request, model="m", backend="b")


def _chat(request: ModelRequest) -> dict[str, Any]:
    return openai_chat.build_body(request, model="m", backend="b", official=True)


def _local(request: ModelRequest) -> dict[str, Any]:
    return openai_chat.build_body(request, model="m", backend="b", official=False)


def _responses(request: ModelRequest) -> dict[str, Any]:
    return openai_responses.build_body(request, model="m", backend="b")


def _gemini(request: ModelRequest) -> dict[str, Any]:
    return gemini.build_body(request, model="m", backend="b")


@pytest.mark.parametrize("tool", schema_samples.ALL, ids=lambda t: t.name)
def test_anthropic_accepts_every_sample(tool: ToolSpec) -> None:
    (emitted,) = _anthropic(_request([tool]))["tools"]
    assert tool_rules.anthropic_violations(emitted) == []


@pytest.mark.parametrize("build", [_chat, _local], ids=["openai", "local"])
@pytest.mark.parametrize("tool", schema_samples.ALL, ids=lambda t: t.name)
def test_openai_chat_accepts_every_sample(tool: ToolSpec, build: Build) -> None:
    (emitted,) = build(_request([tool]))["tools"]
    assert tool_rules.chat_violations(emitted) == []
    assert "strict" not in emitted["function"]


@pytest.mark.parametrize("tool", schema_samples.ALL, ids=lambda t: t.name)
def test_openai_responses_accepts_every_sample(tool: ToolSpec) -> None:
    (emitted,) = _responses(_request([tool]))["tools"]
    assert tool_rules.responses_violations(emitted) == []


@pytest.mark.parametrize("tool", schema_samples.ALL, ids=lambda t: t.name)
def test_gemini_accepts_every_sample_and_keeps_its_properties(tool: ToolSpec) -> None:
    body = _gemini(_request([tool]))
    assert gemini_rules.request_violations(body, allowed=gemini_rules.CONSERVATIVE) == []
    (declaration,) = body["tools"][0]["functionDeclarations"]
    sent = declaration.get("parameters", declaration.get("parametersJsonSchema", {}))
    top = tool.input_schema.get("properties") or {}
    assert set(top) <= gemini_rules.property_names(sent)


def test_the_whole_sample_set_in_one_request_passes_every_provider() -> None:
    request = _request(schema_samples.ALL)
    assert gemini_rules.request_violations(_gemini(request)) == []
    for tool in _anthropic(request)["tools"]:
        assert tool_rules.anthropic_violations(tool) == []
    for tool in _chat(request)["tools"]:
        assert tool_rules.chat_violations(tool) == []
    for tool in _responses(request)["tools"]:
        assert tool_rules.responses_violations(tool) == []


@pytest.mark.parametrize("build", [_anthropic, _chat, _local, _responses])
def test_builtin_tool_schemas_go_out_unchanged(build: Build) -> None:
    specs = tool_specs()
    body = build(_request(specs))
    for spec, tool in zip(specs, body["tools"], strict=True):
        schema = (
            tool.get("input_schema") or tool.get("parameters") or tool["function"]["parameters"]
        )
        assert schema is spec.input_schema  # the very object: same bytes, same cache prefix


# -- Gemini: what the conversion does, rule by rule --------------------------------------


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    converted = declaration_schema(schema)
    assert converted is not None
    key, value = converted
    assert key == "parameters"
    return value


def test_gemini_conversion_of_a_pydantic_schema() -> None:
    (tool,) = [t for t in schema_samples.MCP_STYLE if t.name.endswith("search_issues")]
    sent = _parameters(tool.input_schema)
    props = sent["properties"]
    assert props["query"] == {"type": "string", "description": "Query (example: label:bug)"}
    assert props["filters"]["items"]["properties"]["value"] == {
        "anyOf": [{"type": "string"}, {"type": "number"}],
        "description": "Value",
        "nullable": True,
    }
    assert props["order"] == {
        "type": "string",
        "enum": ["asc", "desc"],
        "description": "Order (default: desc)",
    }
    assert props["limit"] == {
        "type": "integer",
        "minimum": 1,
        "description": "Limit (default: null)",
        "nullable": True,
    }
    assert props["since"]["format"] == "date-time"
    assert sent["required"] == ["query"]


def test_gemini_const_type_lists_and_numeric_enums() -> None:
    sent = _parameters(
        {
            "type": "object",
            "properties": {
                "kind": {"const": "plain"},
                "cc": {"type": ["string", "null"], "format": "email"},
                "priority": {"type": "integer", "enum": [1, 2, 3]},
                "either": {"type": ["string", "integer"]},
            },
            "required": ["kind", "missing"],
        }
    )
    props = sent["properties"]
    assert props["kind"] == {"type": "string", "enum": ["plain"]}
    assert props["cc"] == {"type": "string", "description": "format: email", "nullable": True}
    assert props["priority"] == {"type": "integer", "description": "one of: 1, 2, 3"}
    assert props["either"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert sent["required"] == ["kind"]  # a name no property defines is refused


@pytest.mark.parametrize(
    "shape",
    [
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "array"},
        {"description": "anything"},
    ],
    ids=["free-form map", "array without items", "any value"],
)
def test_gemini_sends_what_the_subset_cannot_say_as_json_schema(shape: dict[str, Any]) -> None:
    schema = {"$schema": schema_samples.DRAFT7, "type": "object", "properties": {"x": shape}}
    assert declaration_schema(schema) == (
        "parametersJsonSchema",
        {"type": "object", "properties": {"x": shape}},
    )


def test_gemini_recursive_references_go_as_json_schema() -> None:
    (tool,) = [t for t in schema_samples.MCP_STYLE if t.name.endswith("tree")]
    key, value = declaration_schema(tool.input_schema) or ("", {})
    assert key == "parametersJsonSchema"
    assert value["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


@pytest.mark.parametrize("schema", [{}, {"type": "object"}, {"type": "object", "properties": {}}])
def test_gemini_leaves_parameters_out_for_a_tool_without_input(schema: dict[str, Any]) -> None:
    declaration = _gemini(_request([ToolSpec("now", "The time.", schema)]))["tools"][0]
    assert declaration["functionDeclarations"] == [{"name": "now", "description": "The time."}]


def test_top_level_combinators_are_merged_for_anthropic_and_gemini() -> None:
    schema = {
        "type": "object",
        "oneOf": [
            {"properties": {"path": {"type": "string"}}, "required": ["path"]},
            {"properties": {"url": {"type": "string"}}, "required": ["url"]},
        ],
    }
    tool = ToolSpec("open", "Open a path or a URL.", schema)
    (sent,) = _anthropic(_request([tool]))["tools"]
    assert sent["input_schema"] == {
        "type": "object",
        "properties": {"path": {"type": "string"}, "url": {"type": "string"}},
    }
    assert set(_parameters(schema)["properties"]) == {"path", "url"}
    (chat,) = _chat(_request([tool]))["tools"]
    assert chat["function"]["parameters"]["oneOf"] == schema["oneOf"]  # OpenAI takes them


# -- OpenAI ---------------------------------------------------------------------------------


def test_openai_gets_items_for_bare_arrays_and_an_object_at_the_top() -> None:
    schema = {"properties": {"ids": {"type": ["array", "null"]}}}
    (tool,) = _chat(_request([ToolSpec("t", "d", schema)]))["tools"]
    assert tool["function"]["parameters"] == {
        "type": "object",
        "properties": {"ids": {"type": ["array", "null"], "items": {}}},
    }


def test_local_servers_get_patterns_as_description() -> None:
    (tool,) = [t for t in schema_samples.MCP_STYLE if t.name.endswith("query")]
    (official,) = _chat(_request([tool]))["tools"]
    (local,) = _local(_request([tool]))["tools"]
    assert official["function"]["parameters"]["properties"]["sql"]["pattern"]
    assert local["function"]["parameters"]["properties"]["sql"] == {
        "type": "string",
        "description": "Pattern: ^\\s*(SELECT|WITH)\\b",
    }


def test_long_descriptions_are_sent_whole() -> None:
    # OpenAI's former 1024-character cap is gone; no provider documents one today.
    tool = schema_samples.CLAUDE_CODE_STYLE[0]
    assert len(tool.description) > 5000
    for build, path in ((_anthropic, ()), (_chat, ("function",)), (_responses, ())):
        sent = build(_request([tool]))["tools"][0]
        for key in path:
            sent = sent[key]
        assert sent["description"] == tool.description


def test_an_all_of_whose_branches_disagree_on_type_goes_whole_to_gemini() -> None:
    """Found by hypothesis: folding ``string`` with ``object`` lost the object's property."""
    from toolwire.backends._gemini_schema import declaration_schema

    schema = {
        "type": "object",
        "properties": {
            "x": {"allOf": [{"type": "string"}, {"type": "object", "properties": {"y": {}}}]}
        },
    }
    assert declaration_schema(schema) == ("parametersJsonSchema", schema)

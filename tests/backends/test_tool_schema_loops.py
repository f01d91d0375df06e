"""Hostile tool schemas (reference loops, deep nesting) reach every provider loosened,
never as a ``RecursionError`` that fails the whole request."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.backends import gemini_rules, tool_rules
from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends.base import ModelRequest
from toolwire.history import ToolSpec, user

Build = Callable[[ModelRequest], dict[str, Any]]

LOOP = {
    "type": "object",
    "anyOf": [{"$ref": "#/$defs/C"}],
    "$defs": {"C": {"anyOf": [{"$ref": "#/$defs/C"}]}},
}
MUTUAL = {
    "type": "object",
    "oneOf": [{"$ref": "#/$defs/A"}, {"properties": {"q": {"type": "string"}}}],
    "$defs": {
        "A": {"allOf": [{"$ref": "#/$defs/B"}], "properties": {"a": {"type": "string"}}},
        "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#"}]},
    },
}
NORMAL = ToolSpec(
    "normal", "a normal tool", {"type": "object", "properties": {"x": {"type": "string"}}}
)


def _nested(key: str, levels: int) -> dict[str, Any]:
    """``levels`` schemas, each the ``key`` of the next (built without recursion)."""
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        if key == "items":
            node = {"type": "array", "items": node}
        elif key == "anyOf":
            node = {"anyOf": [node]}
        else:
            node = {"type": "object", "properties": {"p": node}}
    return node


DEEP: dict[str, dict[str, Any]] = {
    "items": {"type": "object", "properties": {"deep": _nested("items", 5000)}},
    "anyOf": {"type": "object", "anyOf": [_nested("anyOf", 5000)]},
    "properties": _nested("properties", 5000),
}


def _anthropic(request: ModelRequest) -> dict[str, Any]:
    return anthropic.build_body(request, model="m", backend="b")


def _chat(request: ModelRequest) -> dict[str, Any]:
    return openai_chat.build_body(request, model="m", backend="b", official=False)


def _responses(request: ModelRequest) -> dict[str, Any]:
    return openai_responses.build_body(request, model="m", backend="b")


def _gemini(request: ModelRequest) -> dict[str, Any]:
    return gemini.build_body(request, model="m", backend="b")


def _violations(build: Build, body: dict[str, Any]) -> list[str]:
    if build is _gemini:
        return gemini_rules.request_violations(body, allowed=gemini_rules.CONSERVATIVE)
    checks: dict[Build, Callable[[dict[str, Any]], list[str]]] = {
        _anthropic: tool_rules.anthropic_violations,
        _chat: tool_rules.chat_violations,
        _responses: tool_rules.responses_violations,
    }
    check = checks[build]
    return [v for tool in body["tools"] for v in check(tool)]


def _wire_names(build: Build, body: dict[str, Any]) -> list[str]:
    if build is _gemini:
        return [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    if build is _chat:
        return [t["function"]["name"] for t in body["tools"]]
    return [t["name"] for t in body["tools"]]


BUILDS = pytest.mark.parametrize(
    "build",
    [_anthropic, _chat, _responses, _gemini],
    ids=["anthropic", "chat", "responses", "gemini"],
)
HOSTILE: dict[str, dict[str, Any]] = {
    "loop": LOOP,
    "mutual": MUTUAL,
    **{f"deep-{k}": v for k, v in DEEP.items()},
}


@BUILDS
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_schema_is_sent_loosened_beside_a_normal_tool(build: Build, name: str) -> None:
    hostile = ToolSpec("hostile", "a tool with a hostile schema", HOSTILE[name])
    body = build(ModelRequest(system="s", messages=(user("hi"),), tools=(hostile, NORMAL)))
    json.dumps(body)  # what the HTTP layer does with it: no RecursionError there either
    assert _wire_names(build, body) == ["hostile", "normal"]
    assert _violations(build, body) == []

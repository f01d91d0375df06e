"""What Anthropic and the OpenAI APIs refuse in tool definitions, as checkers.

From the providers' documentation and the 400s they answer (docs/backends.md, "Tool
schemas per provider"): names ``^[a-zA-Z0-9_-]{1,64}$``; an input schema that is a
valid JSON Schema with ``type: "object"`` at the top; Anthropic refuses ``anyOf``,
``oneOf`` and ``allOf`` at the top level; OpenAI refuses an array schema without
``items`` (``array schema missing items``); toolwire never asks OpenAI for strict mode.
The SDKs' typed params are the second opinion: pydantic validates each tool against them.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pydantic
from anthropic.types.tool_param import InputSchemaTyped, ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam

NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ANTHROPIC = pydantic.TypeAdapter(ToolParam)
_ANTHROPIC_SCHEMA = pydantic.TypeAdapter(InputSchemaTyped)
_CHAT = pydantic.TypeAdapter(ChatCompletionFunctionToolParam)
_RESPONSES = pydantic.TypeAdapter(FunctionToolParam)


def anthropic_violations(tool: dict[str, Any]) -> list[str]:
    out = _sdk(_ANTHROPIC, tool) + _sdk(_ANTHROPIC_SCHEMA, tool.get("input_schema"))
    out += _name(tool.get("name")) + _object(tool.get("input_schema"))
    schema = tool.get("input_schema") or {}
    out += [
        f"input_schema does not support {k} at the top level"
        for k in ("anyOf", "oneOf", "allOf")
        if k in schema
    ]
    return out


def chat_violations(tool: dict[str, Any]) -> list[str]:
    function = tool.get("function") or {}
    out = _sdk(_CHAT, tool) + _name(function.get("name"))
    out += _object(function.get("parameters")) + _arrays(function.get("parameters"), ())
    if function.get("strict") is True:
        out.append("strict mode asked for")
    return out


def responses_violations(tool: dict[str, Any]) -> list[str]:
    out = _sdk(_RESPONSES, tool) + _name(tool.get("name"))
    out += _object(tool.get("parameters")) + _arrays(tool.get("parameters"), ())
    if tool.get("strict") is not False:
        out.append("strict must be false (the Responses API defaults to strict)")
    return out


def _sdk(adapter: pydantic.TypeAdapter[Any], value: Any) -> list[str]:
    try:
        adapter.validate_python(value, strict=True)
    except pydantic.ValidationError as e:
        return [f"SDK type: {e}"]
    return []


def _name(name: Any) -> list[str]:
    return [] if isinstance(name, str) and NAME.fullmatch(name) else [f"invalid name {name!r}"]


def _object(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ["the input schema is not type: object at the top"]
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        return [f"not a valid JSON Schema: {e.message}"]
    return []


def _arrays(node: Any, where: tuple[str, ...]) -> list[str]:
    """OpenAI's own wording: ``In context=(...), array schema missing items``."""
    if not isinstance(node, dict):
        return []
    out: list[str] = []
    declared = node.get("type")
    types = declared if isinstance(declared, list) else [declared]
    if "array" in types and "items" not in node:
        out.append(f"In context={where}, array schema missing items")
    for key in ("items", "additionalProperties", "not"):
        out += _arrays(node.get(key), (*where, key))
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            out += _arrays(sub, (*where, key, name))
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(node.get(key) or []):
            out += _arrays(sub, (*where, key, str(i)))
    return out


__all__ = ["anthropic_violations", "chat_violations", "responses_violations"]

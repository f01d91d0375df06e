"""What the two OpenAI dialects ask of the answer, in the planner's form (``asks.py``):
``tool_choice`` forcing a call, ``allowed_tools``, ``stop``, and a JSON output format
(Chat's ``response_format``, Responses' ``text.format``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.proxy.asks import ANY_TOOL
from toolwire.proxy.dialects.base import DialectError, Payload


def forced_choice(value: Any, param: str, *, nested: bool) -> Payload | None:
    """``tool_choice`` as the planner's when it forces a call: ``required`` (or
    ``allowed_tools`` in mode ``required``) as ``any``, a named function (under
    ``function`` in Chat, ``nested``; beside ``type`` in Responses) or custom tool as
    ``tool``; None for ``auto``, ``none`` and no choice."""
    if value is None or value in ("auto", "none"):
        return None
    if value == "required":
        return dict(ANY_TOOL)
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "allowed_tools":
        inner = value.get("allowed_tools") if nested else value
        mode = inner.get("mode") if isinstance(inner, dict) else None
        return dict(ANY_TOOL) if mode == "required" else None
    holder = value.get("function") if nested and kind == "function" else value
    name = holder.get("name") if isinstance(holder, dict) else None
    if kind in ("function", "custom") and isinstance(name, str) and name:
        return {"type": "tool", "name": name}
    raise DialectError(
        "tool_choice: auto, none, required, allowed_tools or a named function is required", param
    )


def allowed(tools: list[Payload], choice: Any) -> list[Payload]:
    """``tools`` less those an ``allowed_tools`` choice leaves out (Chat nests its list
    under ``allowed_tools``, Responses does not; a function's name under ``function``
    in Chat)."""
    if not isinstance(choice, dict) or choice.get("type") != "allowed_tools":
        return tools
    inner = choice.get("allowed_tools", choice)
    listed = inner.get("tools") if isinstance(inner, dict) else None
    names = set()
    for tool in listed if isinstance(listed, list) else ():
        holder = tool.get("function", tool) if isinstance(tool, dict) else {}
        names.add(holder.get("name") if isinstance(holder, dict) else None)
    return [t for t in tools if t["name"] in names]


def stop_list(value: Any, param: str) -> tuple[str, ...]:
    """``stop``: a string or a list of strings (empty ones left out)."""
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(s, str) for s in listed):
        raise DialectError("stop: a string or a list of strings is required", param)
    return tuple(s for s in listed if s)


def schema_format(spec: Mapping[str, Any], param: str) -> Payload:
    """A ``json_schema`` format (``name``, ``schema``, ``strict``) in the planner's form."""
    schema = spec.get("schema")
    if not isinstance(schema, dict):
        raise DialectError("a json_schema format needs a schema object", f"{param}.schema")
    name = spec.get("name")
    return {
        "type": "json_schema",
        "schema": schema,
        "name": name if isinstance(name, str) and name else "response",
        "strict": spec.get("strict") is True,
    }


def chat_format(value: Any) -> Payload | None:
    """``response_format`` in the planner's form (``asks.OUTPUT_KEY``)."""
    if value is None or (isinstance(value, dict) and value.get("type") == "text"):
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "json_object":
        return {"type": "json_object"}
    spec = value.get("json_schema") if isinstance(value, dict) else None
    if kind != "json_schema" or not isinstance(spec, dict):
        raise DialectError(
            "response_format: text, json_object, or json_schema with a json_schema object "
            "is required",
            "response_format",
        )
    return schema_format(spec, "response_format.json_schema")


def text_format(value: Any) -> Payload | None:
    """Responses' ``text.format`` in the planner's form (``asks.OUTPUT_KEY``)."""
    if value is None or (isinstance(value, dict) and value.get("type") == "text"):
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema" or not isinstance(value, dict):
        raise DialectError(
            "text.format: text, json_object or json_schema is required", "text.format"
        )
    return schema_format(value, "text.format")


__all__ = ["allowed", "chat_format", "forced_choice", "schema_format", "stop_list", "text_format"]

"""What a request asks of the answer, in each wire's own fields: a required tool call
(``ToolChoice``), stop sequences, a JSON output format (``OutputFormat``).

The agent asks none of them; the proxy carries them from its clients (docs/proxy.md,
"What each dialect carries"). Where a wire has no field for one, the builder's system
prompt says it instead (``prompt_notes``), so the request keeps a defined meaning:

* tool calls written as text (a text ``tool_format``) cannot be forced by any wire: the
  prompt says which call the reply must make;
* Anthropic's Messages API (and the servers speaking it) has no JSON output field here:
  the prompt asks for JSON, with the schema;
* JSON output beside text-format tools would forbid the tool markup: the prompt asks for
  JSON instead of the wire's field (a reply may still call a tool).
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.backends._gemini_schema import InexpressibleError, to_subset
from toolwire.backends._names import ToolNames
from toolwire.backends.base import ModelRequest, OutputFormat


def wire_output(request: ModelRequest, *, native: bool) -> OutputFormat | None:
    """The output format the wire's own field carries (None: none, or the prompt's)."""
    return request.output if native or not request.tools else None


def prompt_notes(request: ModelRequest, *, native: bool, json_field: bool) -> str:
    """The system-prompt lines saying what the wire cannot (module doc); ``json_field``:
    the wire takes an output format."""
    notes: list[str] = []
    choice = request.tool_choice
    if choice is not None and not native and request.tools:
        which = f"the tool {choice.name}" if choice.name else "one of the tools"
        notes.append(f"In this reply you must call {which}.")
    output = request.output
    if output is not None and (not json_field or wire_output(request, native=native) is None):
        if output.schema is None:
            notes.append("Answer with one JSON object only, and no other text.")
        else:
            schema = json.dumps(output.schema, ensure_ascii=False)
            notes.append(
                f"Answer with JSON only, and no other text, matching this JSON Schema: {schema}"
            )
    return "\n\n".join(notes)


def anthropic_asks(request: ModelRequest, names: ToolNames, *, native: bool) -> dict[str, Any]:
    """``tool_choice`` (``any`` or ``tool``) and ``stop_sequences`` of a Messages body."""
    out: dict[str, Any] = {}
    choice = request.tool_choice
    if choice is not None and native and request.tools:
        out["tool_choice"] = (
            {"type": "tool", "name": names.wire(choice.name)} if choice.name else {"type": "any"}
        )
    if request.stop:
        out["stop_sequences"] = list(request.stop)
    return out


def chat_asks(request: ModelRequest, names: ToolNames, *, native: bool) -> dict[str, Any]:
    """``tool_choice``, ``stop`` and ``response_format`` of a Chat Completions body."""
    out: dict[str, Any] = {}
    choice = request.tool_choice
    if choice is not None and native and request.tools:
        out["tool_choice"] = (
            {"type": "function", "function": {"name": names.wire(choice.name)}}
            if choice.name
            else "required"
        )
    if request.stop:
        out["stop"] = list(request.stop)
    output = wire_output(request, native=native)
    if output is not None and output.schema is None:
        out["response_format"] = {"type": "json_object"}
    elif output is not None:
        named = {"name": output.name, "schema": output.schema, "strict": output.strict}
        out["response_format"] = {"type": "json_schema", "json_schema": named}
    return out


def responses_asks(request: ModelRequest, names: ToolNames, *, native: bool) -> dict[str, Any]:
    """``tool_choice`` and ``text.format`` of a Responses body (the API has no stops)."""
    out: dict[str, Any] = {}
    choice = request.tool_choice
    if choice is not None and native and request.tools:
        out["tool_choice"] = (
            {"type": "function", "name": names.wire(choice.name)} if choice.name else "required"
        )
    output = wire_output(request, native=native)
    if output is not None and output.schema is None:
        out["text"] = {"format": {"type": "json_object"}}
    elif output is not None:
        out["text"] = {
            "format": {
                "type": "json_schema",
                "name": output.name,
                "schema": output.schema,
                "strict": output.strict,
            }
        }
    return out


def gemini_tool_config(
    request: ModelRequest, names: ToolNames, *, native: bool
) -> dict[str, Any] | None:
    """The ``toolConfig`` forcing a call (mode ``ANY``, the named function allowed)."""
    choice = request.tool_choice
    if choice is None or not native or not request.tools:
        return None
    calling: dict[str, Any] = {"mode": "ANY"}
    if choice.name:
        calling["allowedFunctionNames"] = [names.wire(choice.name)]
    return {"functionCallingConfig": calling}


def gemini_generation(request: ModelRequest, *, native: bool) -> dict[str, Any]:
    """``stopSequences`` and the JSON output of a ``generationConfig``: the schema in
    Gemini's OpenAPI subset (``responseSchema``), else as JSON Schema
    (``responseJsonSchema``) when the subset cannot say it."""
    out: dict[str, Any] = {}
    if request.stop:
        out["stopSequences"] = list(request.stop)
    output = wire_output(request, native=native)
    if output is None:
        return out
    out["responseMimeType"] = "application/json"
    if output.schema is not None:
        try:
            out["responseSchema"] = to_subset(output.schema)
        except InexpressibleError:
            out["responseJsonSchema"] = output.schema
    return out


__all__ = [
    "anthropic_asks",
    "chat_asks",
    "gemini_generation",
    "gemini_tool_config",
    "prompt_notes",
    "responses_asks",
    "wire_output",
]

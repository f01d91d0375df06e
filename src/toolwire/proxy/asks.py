"""What a client asks of the answer, read from the planner's (Anthropic Messages) form
into the neutral request: a required call, stop sequences, a JSON output format.

Anthropic clients send ``tool_choice`` (``any``, ``tool``) and ``stop_sequences``
themselves; the other dialects' importers write their own fields in the same form
(``tool_choice: required`` as ``{"type": "any"}``, ``stop`` as ``stop_sequences``) and
an output format under ``output_format``: ``{"type": "json_schema", "schema", "name",
"strict"}`` (the shape Anthropic's structured outputs take) or ``{"type":
"json_object"}``. The backends send each on in their wire's field (``backends._asks``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.backends.base import OutputFormat, ToolChoice
from toolwire.history import ToolSpec
from toolwire.proxy.errors import BadRequestError

OUTPUT_KEY = "output_format"
ANY_TOOL: dict[str, str] = {"type": "any"}


def tool_choice(value: Any, tools: Sequence[ToolSpec], given: Any = ()) -> ToolChoice | None:
    """An Anthropic ``tool_choice`` as the neutral one, given the ``tools`` sent on and
    the client's own list (``given``). ``auto`` and ``none`` are None (a ``none`` client's
    tools are already left out by its importer), and so is a call of a tool the backend
    cannot run (Anthropic's server tools, left out): the model then chooses."""
    if not isinstance(value, Mapping) or value.get("type") not in ("any", "tool"):
        return None
    names = {t.name for t in tools}
    if value["type"] == "any":
        return ToolChoice() if names else None
    name = value.get("name")
    if isinstance(name, str) and name in names:
        return ToolChoice(name)
    listed = given if isinstance(given, list) else []
    if any(isinstance(t, Mapping) and t.get("name") == name for t in listed):
        return None
    offered = ", ".join(sorted(names)) or "none"
    raise BadRequestError(
        f"tool_choice: the tool {name!r} is not among the tools offered ({offered});"
        " name one of them, or ask for any tool"
    )


def stop_sequences(value: Any, field: str = "stop_sequences") -> tuple[str, ...]:
    """A list of stop strings (a string alone is one); empty ones are left out."""
    if value is None:
        return ()
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(s, str) for s in listed):
        raise BadRequestError(f"{field}: a string or a list of strings is required")
    return tuple(s for s in listed if s)


def output_format(value: Any) -> OutputFormat | None:
    """``output_format`` (module doc) as the neutral output format."""
    if not isinstance(value, Mapping) or value.get("type") in (None, "text"):
        return None
    if value["type"] == "json_object":
        return OutputFormat()
    schema = value.get("schema")
    if value["type"] != "json_schema" or not isinstance(schema, dict):
        raise BadRequestError(
            "output_format: json_object, or json_schema with a schema object, is required"
        )
    name = value.get("name")
    return OutputFormat(
        schema, name if isinstance(name, str) and name else "response", bool(value.get("strict"))
    )


__all__ = ["ANY_TOOL", "OUTPUT_KEY", "output_format", "stop_sequences", "tool_choice"]

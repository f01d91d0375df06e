"""``McpTool``: one server tool as toolwire offers it to the model."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any

from toolwire.backends._gemini_schema import declaration_schema
from toolwire.backends._schema import object_schema
from toolwire.backends.openai_chat import parameters
from toolwire.history import ToolSpec


@dataclass(frozen=True)
class McpTool:
    """A tool of a running server, under its provider-safe ``model_name``.

    ``read_only``, ``destructive`` and ``open_world`` are the server's hints as it set
    them, absent meaning False (not MCP's defaults, under which an unannotated tool
    would count as destructive and open-world): a hint toolwire acts on (the ACP kind,
    permissions) must have been given. ``trusted`` is the server's, from the config.
    """

    model_name: str
    server: str
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    destructive: bool = False
    open_world: bool = False
    trusted: bool = False

    def spec(self) -> ToolSpec:
        """The tool as the conversation model offers it to a backend."""
        return ToolSpec(self.model_name, self.description, self.input_schema)


def from_listing(tool: Any, *, server: str, model_name: str, trusted: bool) -> McpTool:
    """An ``mcp_types.Tool`` (``name``, ``title``, ``annotations``...) as ``McpTool``."""
    notes = tool.annotations
    title = tool.title or (notes.title if notes is not None else None)
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    return McpTool(
        model_name=model_name,
        server=server,
        name=tool.name,
        title=title,
        description=tool.description or title or tool.name,
        input_schema=dict(schema) or {"type": "object", "properties": {}},
        read_only=bool(notes is not None and notes.read_only_hint),
        destructive=bool(notes is not None and notes.destructive_hint),
        open_world=bool(notes is not None and notes.open_world_hint),
        trusted=trusted,
    )


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why some provider's builder cannot send ``schema``, or None when every one can.

    The builders loosen what a provider refuses and cut loops; this is the guard behind
    them, so one tool a builder still fails on is left out instead of failing every
    request of the session.
    """
    try:
        json.dumps(object_schema(schema, flatten_top=True))
        json.dumps(parameters(schema, local=True))
        json.dumps(declaration_schema(schema))
    except Exception as e:  # RecursionError included: any failure here is the schema's
        text = str(e).strip().splitlines()
        return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    return None


def allowed(name: str, allow: tuple[str, ...], deny: tuple[str, ...]) -> bool:
    """Whether the config's patterns let ``name`` through: empty ``allow`` is all,
    ``deny`` wins. Case-sensitive, as tool names are."""
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in deny):
        return False
    return not allow or any(fnmatch.fnmatchcase(name, pattern) for pattern in allow)


__all__ = ["McpTool", "allowed", "from_listing", "schema_problem"]

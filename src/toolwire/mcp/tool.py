"""``McpTool``: one server tool as toolwire offers it to the model."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

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


def allowed(name: str, allow: tuple[str, ...], deny: tuple[str, ...]) -> bool:
    """Whether the config's patterns let ``name`` through: empty ``allow`` is all,
    ``deny`` wins. Case-sensitive, as tool names are."""
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in deny):
        return False
    return not allow or any(fnmatch.fnmatchcase(name, pattern) for pattern in allow)


__all__ = ["McpTool", "allowed", "from_listing"]

"""The agent's tools, named and shaped like Claude Code's (docs/design.md, "The agent's
tools").

Use::

    ctx = ToolContext.create("/abs/project", ["/abs/other"], fs=..., terminal=...)
    tool = get_tool("Edit")                      # None for an unknown name
    result = await tool.run(arguments, ctx.with_output(on_chunk))

``tool_specs()`` lists the tools for the model; each tool also exposes ``kind`` (the
ACP ``ToolKind``), ``effect`` (what a call can do: read, edit, command, fetch; all
but reads may ask) and ``scope(args)``
(what a permission holds for when less than the tool: ``WebFetch``'s host).
"""

from __future__ import annotations

from types import MappingProxyType

from toolwire.history import ToolSpec
from toolwire.tools.base import (
    CommandOutcome,
    Effect,
    FileDiff,
    Location,
    PlanEntry,
    Tool,
    ToolError,
    ToolKind,
    ToolResult,
)
from toolwire.tools.bash import BashTool
from toolwire.tools.context import ToolContext, ToolLimits
from toolwire.tools.edit import EditTool
from toolwire.tools.fs import FileSystem, LocalFileSystem, atomic_write
from toolwire.tools.glob import GlobTool
from toolwire.tools.grep import GrepTool
from toolwire.tools.paths import PathRefusedError
from toolwire.tools.read import ReadTool
from toolwire.tools.search_port import SearchPort, SearchResult
from toolwire.tools.terminal import BackgroundJob, CommandResult, LocalTerminal, Terminal
from toolwire.tools.todo import TodoWriteTool
from toolwire.tools.web_port import Page, WebPort
from toolwire.tools.webfetch import WebFetchTool
from toolwire.tools.websearch import WebSearchTool
from toolwire.tools.write import WriteTool
from toolwire.updates.titles import Describer

_ALL: tuple[Tool, ...] = (
    ReadTool(),
    WriteTool(),
    EditTool(),
    BashTool(),
    GrepTool(),
    GlobTool(),
    TodoWriteTool(),
    WebFetchTool(),
    WebSearchTool(),
)
TOOLS: MappingProxyType[str, Tool] = MappingProxyType({t.name: t for t in _ALL})
"""Every tool by its exact name, in the order offered to the model."""


def get_tool(name: str) -> Tool | None:
    """The tool called ``name``; a name in other case (``read``) is accepted too."""
    found = TOOLS.get(name)
    if found is None:
        folded = name.casefold()
        found = next((t for n, t in TOOLS.items() if n.casefold() == folded), None)
    return found


def describers() -> dict[str, Describer]:
    """How each tool's calls read on its card (``Tool.describe``), by exact name: what the
    agent gives the update engine."""
    return {name: tool.describe for name, tool in TOOLS.items()}


def tool_specs(
    names: tuple[str, ...] | None = None, *, without: tuple[str, ...] = ()
) -> list[ToolSpec]:
    """The specs offered to the model: all tools, or those named, in registry order;
    ``without`` leaves some out (``WebSearch`` where the session has no search)."""
    return [
        t.spec()
        for t in TOOLS.values()
        if (names is None or t.name in names) and t.name not in without
    ]


__all__ = [
    "TOOLS",
    "BackgroundJob",
    "BashTool",
    "CommandOutcome",
    "CommandResult",
    "EditTool",
    "Effect",
    "FileDiff",
    "FileSystem",
    "GlobTool",
    "GrepTool",
    "LocalFileSystem",
    "LocalTerminal",
    "Location",
    "Page",
    "PathRefusedError",
    "PlanEntry",
    "ReadTool",
    "SearchPort",
    "SearchResult",
    "Terminal",
    "TodoWriteTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "ToolLimits",
    "ToolResult",
    "WebFetchTool",
    "WebPort",
    "WebSearchTool",
    "WriteTool",
    "atomic_write",
    "describers",
    "get_tool",
    "tool_specs",
]

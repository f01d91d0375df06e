"""MCP servers for a session: the editor's and the user's, through the official SDK.

``McpHub`` starts a session's servers in parallel (stdio, streamable HTTP, SSE), lists
their tools under provider-safe names (``names``), calls them and maps their results to
ACP content and model text (``result``), restarts a server that dies once, and stops
them all (stdio servers as process groups). ``ServerSpec`` says what to run, made from
the editor's ``mcpServers`` or the config's ``[mcp_servers.NAME]`` tables. See
docs/mcp.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolwire.mcp.names import assign_names, model_name
from toolwire.mcp.result import McpResult, map_result
from toolwire.mcp.spec import ServerSpec, specs_from_acp, specs_from_config
from toolwire.mcp.tool import McpTool

if TYPE_CHECKING:
    from toolwire.mcp.hub import McpHub

__all__ = [
    "McpHub",
    "McpResult",
    "McpTool",
    "ServerSpec",
    "assign_names",
    "map_result",
    "model_name",
    "specs_from_acp",
    "specs_from_config",
]


def __getattr__(name: str) -> Any:
    # The hub brings in the MCP SDK (some 0.5 s of imports); an agent whose sessions run no
    # MCP server never pays for it, and every agent starts that much sooner.
    if name == "McpHub":
        from toolwire.mcp.hub import McpHub

        return McpHub
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""MCP servers for a session: the editor's and the user's, through the official SDK.

``McpHub`` starts a session's servers in parallel (stdio, streamable HTTP, SSE), lists
their tools under provider-safe names (``names``), calls them and maps their results to
ACP content and model text (``result``), restarts a server that dies once, and stops
them all (stdio servers as process groups). ``ServerSpec`` says what to run, made from
the editor's ``mcpServers`` or the config's ``[mcp_servers.NAME]`` tables. See
docs/mcp.md.
"""

from __future__ import annotations

from toolwire.mcp.hub import McpHub
from toolwire.mcp.names import assign_names, model_name
from toolwire.mcp.result import McpResult, map_result
from toolwire.mcp.spec import ServerSpec, specs_from_acp, specs_from_config
from toolwire.mcp.tool import McpTool

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

"""An MCP server on the official SDK whose tool list is hostile, run as a script.

``schemas.py loop`` lists ``looped``, whose input schema loops through ``$ref`` under a
top-level ``anyOf``, beside a normal ``echo``. ``schemas.py deep`` lists a tool whose
schema nests deeper than the client's JSON parser accepts: its ``tools/list`` answer
cannot be parsed. ``garbled`` answers a call that way.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

server = MCPServer("schemas")

LOOP = {
    "type": "object",
    "anyOf": [{"$ref": "#/$defs/C"}],
    "$defs": {"C": {"anyOf": [{"$ref": "#/$defs/C"}]}},
}


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "array", "items": node}
    return {"type": "object", "properties": {"deep": node}}


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def garbled() -> CallToolResult:
    """An answer nested deeper than the client's JSON parser accepts."""
    node: list[Any] = []
    for _ in range(250):
        node = [node]
    return CallToolResult(content=[TextContent(text="deep")], structured_content={"deep": node})


@server.tool()
def looped() -> str:
    """A tool whose schema is replaced below."""
    return "looped"


if __name__ == "__main__":
    tool = server._tool_manager.get_tool("looped")
    assert tool is not None
    tool.parameters = _deep(200) if sys.argv[1:] == ["deep"] else LOOP
    server.run("stdio")

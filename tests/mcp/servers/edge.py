"""An MCP server on the official SDK for the hub's edge cases, run as a script.

``edge.py serve`` answers; ``edge.py never`` never answers (a start timeout). The tools
crash the server mid-call, wait to be cancelled (writing what happened to
``$EDGE_MARKS``), change the tool list, leave a child process behind, return a huge text,
or take a schema Gemini's ``parameters`` would reject (``$defs``, ``$ref``, ``anyOf``,
``format``), or return a huge image or huge structured content; ``ask_name`` asks the user through
MCP elicitation.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from datetime import datetime

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel

server = MCPServer("edge")


def _mark(text: str) -> None:
    path = os.environ.get("EDGE_MARKS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
async def crash() -> str:
    """Exit the whole server in the middle of the call."""
    _mark(f"crash {os.getpid()}")
    await asyncio.sleep(0.1)
    os._exit(3)


@server.tool()
async def wait(seconds: float, ctx: Context) -> str:
    """Wait, reporting progress; note a cancellation."""
    try:
        for step in range(int(seconds * 10)):
            await ctx.report_progress(step, seconds * 10, "waiting")
            await asyncio.sleep(0.1)
    except BaseException:
        _mark("cancelled")
        raise
    return "done"


@server.tool()
async def change(ctx: Context) -> str:
    """Add a tool named ``added`` and tell the client the list changed."""

    def added() -> str:
        """A tool that appeared later."""
        return "here"

    server.add_tool(added)
    await ctx.session.send_tool_list_changed()
    return "changed"


@server.tool()
async def exit_soon() -> str:
    """Answer, then exit while idle."""
    asyncio.get_running_loop().call_later(0.2, os._exit, 4)
    return "bye"


@server.tool()
def spawn() -> int:
    """Leave a child process running, as servers that start helpers do; its pid."""
    child = subprocess.Popen(["sleep", "300"])
    return child.pid


@server.tool()
def big(size: int) -> str:
    """A text of about ``size`` bytes: a head, many lines, a tail."""
    body = "".join(f"line {i}\n" for i in range(size // 8))
    return "HEAD\n" + body + "TAIL"


@server.tool()
def picture(megabytes: int) -> CallToolResult:
    """A PNG of about ``megabytes`` MB (noise, which nothing compresses), as a screen
    capture tool returns a huge screenshot."""
    import base64
    import io

    from PIL import Image as Picture

    side = int((megabytes * 1024 * 1024 / 3) ** 0.5)
    out = io.BytesIO()
    Picture.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(
        out, "PNG", compress_level=1
    )
    data = base64.b64encode(out.getvalue()).decode("ascii")
    text = TextContent(type="text", text=f"A {side}x{side} capture.")
    return CallToolResult(
        content=[text, ImageContent(type="image", data=data, mime_type="image/png")]
    )


@server.tool()
def records(megabytes: int) -> CallToolResult:
    """``structuredContent`` of about ``megabytes`` MB, and a short text."""
    rows = [
        {"id": i, "name": f"row {i:08d}", "payload": "x" * 64} for i in range(megabytes * 10_000)
    ]
    text = TextContent(type="text", text=f"{len(rows)} rows.")
    return CallToolResult(content=[text], structured_content={"rows": rows})


class Window(BaseModel):
    start: datetime
    label: str | None = None


@server.tool()
def hostile(when: datetime, window: Window | None = None) -> str:
    """A schema with $defs, $ref, anyOf and format, which Gemini's parameters reject."""
    return f"{when.isoformat()} {window}"


class _Name(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the user a question (MCP elicitation) and say what came back."""
    result = await ctx.elicit("Which name should the greeting use?", _Name)
    data = getattr(result, "data", None)
    return f"accepted: {data.name}" if data is not None else f"answer: {result.action}"


if __name__ == "__main__":
    print(f"edge server {os.getpid()} starting", file=sys.stderr, flush=True)
    if sys.argv[1:] == ["never"]:
        time.sleep(3600)
    else:
        server.run("stdio")

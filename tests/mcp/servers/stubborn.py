"""An MCP server that will not stop by itself, run as a script.

It ignores SIGTERM and the end of its stdin, starts a child that ignores SIGTERM too,
and writes both pids to ``$STUBBORN_PIDS``. ``stubborn.py serve`` then answers MCP (on
the official SDK) until its stdin ends, and sleeps on; ``stubborn.py silent`` never
answers (a server still starting).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("stubborn")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child through exec
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["STUBBORN_PIDS"], "w", encoding="ascii") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    if sys.argv[1:] == ["serve"]:
        server.run("stdio")
    while True:
        time.sleep(60)

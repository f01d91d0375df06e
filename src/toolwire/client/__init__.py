"""A terminal ACP client on the official SDK's client side (``toolwire client``, ``demo``).

``TerminalClient`` applies each ``session/update`` to its own ``SessionView`` (ACP v1
replace semantics), renders it live or line by line, answers permission requests and
serves ``fs/*`` inside the session directory. ``run_agent`` spawns an agent and drives
turns with it. Useful on its own to watch what any ACP agent really sends.
"""

from __future__ import annotations

from toolwire.client.ask import LineReader, Permissions
from toolwire.client.client import TerminalClient
from toolwire.client.format import summary_lines
from toolwire.client.fs import FileAccess, FsStats
from toolwire.client.live import LiveRenderer
from toolwire.client.render import PlainRenderer, Renderer
from toolwire.client.run import AgentCommand, RunOutcome, run_agent
from toolwire.client.view import SessionView, ToolCallView, line_size

__all__ = [
    "AgentCommand",
    "FileAccess",
    "FsStats",
    "LineReader",
    "LiveRenderer",
    "Permissions",
    "PlainRenderer",
    "Renderer",
    "RunOutcome",
    "SessionView",
    "TerminalClient",
    "ToolCallView",
    "line_size",
    "run_agent",
    "summary_lines",
]

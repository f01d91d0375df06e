"""Shared helpers for the tool tests: a project directory, a context, running a tool."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolwire.tools import ToolContext, ToolResult, get_tool


def make_project(tmp_path: Path, *extra: Path) -> ToolContext:
    """``tmp_path/project`` (the cwd) and ``tmp_path/outside`` (not a root) exist."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return ToolContext.create(project, extra)


def run(name: str, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Run tool ``name`` to completion in a fresh event loop."""
    tool = get_tool(name)
    assert tool is not None, name
    return asyncio.run(tool.run(args, ctx))


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie nobody reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    """Poll until ``pid`` is gone or ``seconds`` have passed."""
    for _ in range(int(seconds / 0.02)):
        if process_gone(pid):
            return True
        await asyncio.sleep(0.02)
    return process_gone(pid)

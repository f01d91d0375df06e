"""``Glob``: find files whose path matches a pattern.

The pattern is matched against paths relative to ``path`` (default: the working
directory); a leading part without glob characters narrows where the walk starts
(``src/**/*.py`` walks ``src`` only), and may be absolute. Results are regular files
only (no pipes, sockets or devices), in walk order (a directory's files by name, then
its subdirectories by name), relative to the working directory when under it, and
capped at ``ToolLimits.search_max_results``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from toolwire.tools.args import optional_str, required_str
from toolwire.tools.base import Tool, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.errors import ToolError
from toolwire.tools.search import (
    glob_to_regex,
    in_thread,
    relative_posix,
    split_static,
    walk_files,
)
from toolwire.updates.titles import Description, pattern_call

DESCRIPTION = """\
Finds files by name pattern, e.g. "**/*.py" or "src/**/test_*.{ts,tsx}".

- pattern: a glob. `*` matches within a directory name, `**` any number of
  directories, `?` one character, `{a,b}` either alternative.
- path: the directory to search in (default: the working directory).
- Returns matching file paths, a directory's files before its subdirectories, each
  by name. Version-control, virtualenv and cache
  directories are skipped.
- To search file contents use Grep."""


class GlobTool(Tool):
    """The ``Glob`` tool."""

    name = "Glob"
    description = DESCRIPTION
    kind = "search"
    effect = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob to match file paths against."},
            "path": {
                "type": "string",
                "description": "The directory to search in (default: the working directory).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """What is searched for, where."""
        return pattern_call("Find", self.kind, args, cwd)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = required_str(args, "pattern", allow_empty=False)
        prefix, rest = split_static(pattern)
        base = ctx.resolve(optional_str(args, "path") or ".")
        if prefix:
            base = ctx.resolve(str(base / prefix))
        if not await asyncio.to_thread(os.path.isdir, base):
            raise ToolError(f"{ctx.show(base)} is not a directory.")
        limit = ctx.limits.search_max_results

        def work(stop: threading.Event) -> tuple[list[Path], int]:
            regex = glob_to_regex(rest)
            found: list[Path] = []
            total = 0
            for file in walk_files(base, ctx.roots, stop):
                if regex.match(relative_posix(file.path, base)):
                    total += 1
                    if len(found) < limit:
                        found.append(file.path)
            return found, total

        found, total = await in_thread(work)
        shown = [ctx.show(p) for p in found]
        if not shown:
            content = f"No files match {pattern!r} under {ctx.show(base)}."
        else:
            content = "\n".join(shown)
            if total > len(found):
                content += (
                    f"\n[{total - len(found):,} more files match; showing the first "
                    f"{len(found)}. Use a narrower pattern or path.]"
                )
        return ToolResult(
            content=content,
            raw_output={"base": str(base), "files": shown, "total": total},
        )


__all__ = ["GlobTool"]

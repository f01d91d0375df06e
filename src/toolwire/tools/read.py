"""``Read``: a text file's lines, numbered as ``cat -n`` prints them; an image file
(png, jpeg, gif, webp, by its bytes) as the image itself (``tools.image``).

``offset`` is the 1-based line to start at, ``limit`` the number of lines (default
``ToolLimits.read_max_lines``). Long lines are cut, and a result that would exceed
``ToolLimits.read_max_chars`` stops early with a note giving the ``offset`` to continue at,
so the model always knows what it has not seen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from toolwire.tools.args import optional_int, required_str
from toolwire.tools.base import Location, Tool, ToolError, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.files import check_file
from toolwire.tools.image import image_type, read_image
from toolwire.tools.output import numbered, split_lines
from toolwire.updates.titles import Description, file_call

DESCRIPTION = """\
Reads a text file from the local file system.

- file_path: the file to read, absolute or relative to the working directory.
- By default up to 2000 lines are read from the start of the file; for long files give
  offset (1-based line number to start at) and limit (number of lines).
- Lines are returned numbered like `cat -n` (number, tab, line). The numbers are not part
  of the file: never include them in an Edit's old_string.
- Very long lines are cut. Reading a directory fails: use Glob or Bash `ls` instead.
- An image file (PNG, JPEG, GIF, WebP) is returned as the image, when you can see images.
- Read a file before editing it."""


class ReadTool(Tool):
    """The ``Read`` tool."""

    name = "Read"
    description = DESCRIPTION
    kind = "read"
    effect = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The file to read."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "The 1-based line number to start reading at.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "The number of lines to read.",
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """The verb and the file."""
        return file_call("Read", self.kind, args, cwd, lines=True)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(required_str(args, "file_path", allow_empty=False))
        offset = optional_int(args, "offset", minimum=0) or 1  # 0 from a model means "start"
        limit = optional_int(args, "limit", minimum=1) or ctx.limits.read_max_lines
        info = check_file(ctx, path, " Use Glob or Bash `ls` to list it.")
        media_type = await image_type(path) if info is not None else None
        if info is not None and media_type is not None:
            return await read_image(path, media_type, info.st_size, ctx)
        _check_size(path, info, ctx)
        try:
            text = await ctx.fs.read_text(path)
        except FileNotFoundError:
            raise ToolError(f"File does not exist: {ctx.show(path)}") from None
        return _page(path, split_lines(text), offset, limit, ctx)


def _page(path: Path, lines: list[str], offset: int, limit: int, ctx: ToolContext) -> ToolResult:
    """Lines ``offset`` on of a file, numbered and fitted, with how to read on."""
    shown = ctx.show(path)
    location = (Location(str(path), offset),)
    if not lines:
        return ToolResult(
            content=f"(The file {shown} exists but is empty.)",
            locations=location,
            raw_output={"path": str(path), "total_lines": 0, "lines": 0},
        )
    if offset > len(lines):
        raise ToolError(
            f"offset {offset} is past the end of {shown}, which has {len(lines)} lines."
        )
    selected = _fit(lines[offset - 1 : offset - 1 + limit], ctx)
    last = offset + len(selected) - 1
    body = numbered(selected, offset, ctx.limits.line_max_chars)
    if last < len(lines):
        body += (
            f"\n\n[Showing lines {offset}-{last} of {len(lines)}. "
            f"Use offset={last + 1} to read on.]"
        )
    return ToolResult(
        content=body,
        locations=location,
        raw_output={
            "path": str(path),
            "start_line": offset,
            "lines": len(selected),
            "total_lines": len(lines),
        },
    )


def _check_size(path: Path, info: os.stat_result | None, ctx: ToolContext) -> None:
    """Refuse huge files before asking the port."""
    if info is not None and info.st_size > ctx.limits.max_file_bytes:
        raise ToolError(
            f"{ctx.show(path)} is {info.st_size:,} bytes, more than Read accepts "
            f"({ctx.limits.max_file_bytes:,}). Use Grep to find the part you need, "
            "or Bash with `head`, `tail` or `sed -n`."
        )


def _fit(lines: list[str], ctx: ToolContext) -> list[str]:
    """As many of ``lines`` as fit in the result's character budget (at least one)."""
    budget = ctx.limits.read_max_chars
    cap = ctx.limits.line_max_chars
    for count, line in enumerate(lines):
        budget -= min(len(line), cap) + 8  # the number column, the tab and the newline
        if budget < 0:
            return lines[: max(count, 1)]
    return lines


__all__ = ["ReadTool"]

"""What ``Write`` and ``Edit`` share: reading the old text, writing the new, the diff."""

from __future__ import annotations

import os
from pathlib import Path

from toolwire.tools.base import FileDiff, ToolError
from toolwire.tools.context import ToolContext
from toolwire.tools.output import numbered, split_lines

_SNIPPET_CONTEXT = 3


async def read_existing(ctx: ToolContext, path: Path) -> str | None:
    """The current text of ``path``, or None when there is no such file."""
    if os.path.isdir(path):
        raise ToolError(f"{ctx.show(path)} is a directory, not a file.")
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    if size > ctx.limits.max_file_bytes:
        raise ToolError(
            f"{ctx.show(path)} is {size:,} bytes, too large to edit here "
            f"(limit {ctx.limits.max_file_bytes:,}). Use Bash (e.g. `sed -i`) instead."
        )
    try:
        return await ctx.fs.read_text(path)
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ToolError(
            f"{ctx.show(path)} is not a UTF-8 text file; it was left unchanged."
        ) from None


async def save(ctx: ToolContext, path: Path, old: str | None, new: str) -> FileDiff:
    """Write ``new`` through the context's file system and return the change as a diff."""
    await ctx.fs.write_text(path, new)
    return FileDiff(path=str(path), old_text=old, new_text=new)


def line_of(text: str, index: int) -> int:
    """The 1-based line number of character ``index`` in ``text``."""
    return text.count("\n", 0, index) + 1


def snippet(text: str, first_line: int, last_line: int) -> str:
    """Lines ``first_line``..``last_line`` of ``text`` with a little context, numbered."""
    lines = split_lines(text)
    start = max(first_line - _SNIPPET_CONTEXT, 1)
    end = min(last_line + _SNIPPET_CONTEXT, len(lines))
    return numbered(lines[start - 1 : end], start, 2000)


def count_lines(text: str) -> int:
    """Lines in ``text`` as an editor counts them."""
    return len(split_lines(text))


__all__ = ["count_lines", "line_of", "read_existing", "save", "snippet"]

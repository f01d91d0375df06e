"""What ``Write`` and ``Edit`` share: reading the old text, writing the new, the diff."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from toolwire.tools.base import FileDiff, ToolError
from toolwire.tools.context import ToolContext
from toolwire.tools.nofollow import kind_of
from toolwire.tools.output import numbered, split_lines

_SNIPPET_CONTEXT = 3


def check_file(ctx: ToolContext, path: Path, directory: str = "") -> os.stat_result | None:
    """``path``'s own status (``lstat``), or None when it does not exist locally.

    ``ToolError`` for anything a file tool must not open: a directory (``directory`` is
    the rest of that message), a named pipe, socket or device (opening a pipe blocks), or
    a link at a checked path (swapped in since the check, or a loop it could not resolve).
    The port re-checks on the open descriptor, so this is the clear message, not the guard.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None  # missing locally: the port (perhaps an editor buffer) decides
    shown = ctx.show(path)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{shown} is a directory, not a file.{directory}")
    if stat.S_ISLNK(info.st_mode):
        raise ToolError(
            f"{shown} is a symbolic link its check did not see (swapped in since, or a "
            "loop); it was not followed."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(
            f"{shown} is {kind_of(info.st_mode)}, not a regular file; toolwire reads and "
            "writes regular files only."
        )
    return info


async def read_existing(ctx: ToolContext, path: Path) -> str | None:
    """The current text of ``path``, or None when there is no such file."""
    info = check_file(ctx, path)
    size = info.st_size if info is not None else 0
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


__all__ = ["check_file", "count_lines", "line_of", "read_existing", "save", "snippet"]

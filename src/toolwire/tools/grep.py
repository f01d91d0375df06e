"""``Grep``: search file contents with a regular expression (Python ``re`` syntax).

Matching is line by line, as ripgrep does (``^`` and ``$`` anchor at lines). Files are
read as UTF-8 with undecodable bytes replaced; binary files (a NUL byte near the start),
files over ``ToolLimits.max_file_bytes`` and anything but regular files are skipped (a
named pipe, socket or device given as ``path`` is refused). ``output_mode``:
``files_with_matches`` (default) lists files, ``content`` lists ``path:line:text``,
``count`` lists ``path:count``. Results are sorted by path and capped.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from toolwire.tools.args import optional_bool, optional_int, optional_str, required_str
from toolwire.tools.base import Tool, ToolResult
from toolwire.tools.context import ToolContext, ToolLimits
from toolwire.tools.errors import ToolError
from toolwire.tools.nofollow import kind_of
from toolwire.tools.search import Found, glob_to_regex, in_thread, relative_posix, walk_files
from toolwire.updates.output import cap_text
from toolwire.updates.titles import Description, pattern_call

MODES = ("files_with_matches", "content", "count")
_BINARY_SNIFF = 8192

DESCRIPTION = """\
Searches file contents with a regular expression (Python `re` syntax), line by line.

- pattern: the regular expression, e.g. "def slugify" or "log.*Error".
- path: a file or directory to search (default: the working directory).
- glob: only search files matching this glob, e.g. "*.py" or "src/**/*.{ts,tsx}"
  (without a `/` it matches file names at any depth).
- output_mode: "files_with_matches" (default) lists matching files; "content" shows
  matching lines as path:line:text; "count" shows matches per file.
- -i: case-insensitive search. head_limit: show at most this many result lines.
- Binary files, version-control, virtualenv and cache directories are skipped."""


@dataclass(frozen=True, slots=True)
class _Query:
    regex: re.Pattern[str]
    base: Path
    name_filter: re.Pattern[str] | None
    filter_on_name: bool
    mode: str
    limit: int


class GrepTool(Tool):
    """The ``Grep`` tool."""

    name = "Grep"
    description = DESCRIPTION
    kind = "search"
    effect = "read"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regular expression to search."},
            "path": {"type": "string", "description": "File or directory to search in."},
            "glob": {"type": "string", "description": "Only files matching this glob."},
            "output_mode": {
                "type": "string",
                "enum": list(MODES),
                "description": "files_with_matches (default), content or count.",
            },
            "-i": {"type": "boolean", "description": "Case-insensitive search."},
            "head_limit": {"type": "integer", "minimum": 1, "description": "Max result lines."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def describe(self, args: Mapping[str, Any], cwd: str) -> Description:
        """What is searched for, where."""
        return pattern_call("Search", self.kind, args, cwd)

    async def _run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = _query(args, ctx)
        _check_base(query.base, ctx)
        max_bytes = ctx.limits.max_file_bytes
        lines = await in_thread(lambda stop: _search(query, ctx, max_bytes, stop))
        shown = lines[: query.limit]
        more = len(lines) > len(shown)
        if not shown:
            content = "No matches found."
        else:
            content = cap_text("\n".join(shown), ctx.limits.output_max_bytes)
            if more:
                content += (
                    f"\n[Results stop at {len(shown)} lines; there are more. "
                    "Narrow the pattern, path or glob.]"
                )
        return ToolResult(
            content=content,
            raw_output={"mode": query.mode, "shown": len(shown), "more": more},
        )


def _query(args: Mapping[str, Any], ctx: ToolContext) -> _Query:
    pattern = required_str(args, "pattern", allow_empty=False)
    flags = re.MULTILINE | (re.IGNORECASE if optional_bool(args, "-i") else 0)
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        raise ToolError(f"Invalid regular expression {pattern!r}: {exc}.") from None
    mode = optional_str(args, "output_mode") or "files_with_matches"
    if mode not in MODES:
        raise ToolError(f"output_mode must be one of {', '.join(MODES)}; got {mode!r}.")
    glob = optional_str(args, "glob")
    head_limit = optional_int(args, "head_limit", minimum=1)
    return _Query(
        regex=regex,
        base=ctx.resolve(optional_str(args, "path") or "."),
        name_filter=glob_to_regex(glob) if glob else None,
        filter_on_name=bool(glob) and "/" not in (glob or ""),
        mode=mode,
        limit=min(head_limit or ctx.limits.search_max_results, ctx.limits.search_max_results),
    )


def _check_base(base: Path, ctx: ToolContext) -> None:
    """Refuse a missing ``path``, a special file (a pipe would block) or a swapped-in link."""
    try:
        mode = os.lstat(base).st_mode
    except FileNotFoundError:
        raise ToolError(f"Path does not exist: {ctx.show(base)}") from None
    if stat.S_ISLNK(mode):
        raise ToolError(
            f"{ctx.show(base)} is a symbolic link its check did not see (swapped in since, "
            "or a loop); it was not followed."
        )
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise ToolError(
            f"{ctx.show(base)} is {kind_of(mode)}, not a regular file or a directory; "
            "Grep searches regular files only."
        )


def _search(query: _Query, ctx: ToolContext, max_bytes: int, stop: threading.Event) -> list[str]:
    """Result lines, for every candidate file in path order."""
    out: list[str] = []
    with contextlib.closing(_candidates(query, ctx.roots, stop)) as candidates:
        for found in candidates:
            text = read_candidate(found, max_bytes)
            if text is None or not query.regex.search(text):
                continue  # a line match implies a whole-text match (MULTILINE): cheap filter
            out.extend(_report(query, ctx, found.path, text))
            if len(out) > query.limit:
                break  # the rest would not be shown
    return out


def _candidates(
    query: _Query, roots: tuple[Path, ...], stop: threading.Event
) -> Generator[Found, None, None]:
    if not os.path.isdir(query.base):
        # A file named as ``path``, opened by its checked path (``Found.open``).
        yield Found(query.base, -1, query.base.name, target=query.base)
        return
    with contextlib.closing(walk_files(query.base, roots, stop)) as walk:
        for found in walk:
            if query.name_filter is None:
                yield found
                continue
            subject = found.name if query.filter_on_name else relative_posix(found.path, query.base)
            if query.name_filter.match(subject):
                yield found


def _report(query: _Query, ctx: ToolContext, path: Path, text: str) -> list[str]:
    shown = ctx.show(path)
    if query.mode == "files_with_matches":
        return [shown]
    limits: ToolLimits = ctx.limits
    hits = [
        (number, line)
        for number, line in enumerate(text.split("\n"), start=1)
        if query.regex.search(line)
    ]
    if query.mode == "count":
        return [f"{shown}:{len(hits)}"] if hits else []
    return [f"{shown}:{n}:{_cut(line.rstrip(chr(13)), limits.line_max_chars)}" for n, line in hits]


def read_candidate(found: Found, max_bytes: int) -> str | None:
    """The file's text, or None for a binary, unreadable, oversized or non-regular file."""
    try:
        fd = found.open()
    except OSError:
        return None
    with open(fd, "rb") as handle:
        try:
            if os.fstat(fd).st_size > max_bytes:
                return None
            data = handle.read(max_bytes + 1)  # it may have grown since
        except OSError:
            return None
    if len(data) > max_bytes or b"\0" in data[:_BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + " [...]"


__all__ = ["GrepTool"]

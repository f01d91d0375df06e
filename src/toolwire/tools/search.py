"""What ``Glob`` and ``Grep`` share: glob patterns, a safe directory walk, worker threads.

Glob syntax: ``*`` any run of characters within a path segment, ``?`` one character,
``[abc]`` / ``[!abc]`` a class, ``{a,b}`` alternatives, ``**`` any number of directories
(as a whole segment). A pattern without ``/`` matches a file's name at any depth when
used as a ``Grep`` filter, as ripgrep's ``--glob`` does.

The walk never follows a symlinked directory, skips version-control and cache
directories, and yields a symlinked file only when its target lies inside the roots, so
a search cannot read outside the session's directories either.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from toolwire.tools.paths import within

T = TypeVar("T")

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox"}
)  # fmt: skip
_GLOB_CHARS = frozenset("*?[{")


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex matching whole ``/``-separated relative paths against ``pattern``."""
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append(r"(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i) and i + 2 == len(pattern):
            out.append(r".*")
            i += 2
        else:
            piece, i = _translate_one(pattern, i)
            out.append(piece)
    return "".join(out)


def _translate_one(pattern: str, i: int) -> tuple[str, int]:
    """The regex for the token at ``i`` and the index after it."""
    char = pattern[i]
    if char == "*":
        return r"[^/]*", i + 1
    if char == "?":
        return r"[^/]", i + 1
    if char == "[":
        end = pattern.find("]", i + 2)
        if end != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            return f"[{body}]", end + 1
    if char == "{":
        end = pattern.find("}", i)
        if end != -1:
            options = pattern[i + 1 : end].split(",")
            return "(?:" + "|".join(_translate(o) for o in options) + ")", end + 1
    return re.escape(char), i + 1


def split_static(pattern: str) -> tuple[str, str]:
    """The leading directories without glob characters, and the rest of the pattern."""
    parts = pattern.split("/")
    static: list[str] = []
    while len(parts) > 1 and not _GLOB_CHARS.intersection(parts[0]):
        static.append(parts.pop(0))
    prefix = "/".join(static)
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    return prefix, "/".join(parts)


def walk_files(base: Path, roots: Sequence[Path], stop: threading.Event) -> Iterator[Path]:
    """Files under ``base`` (sorted, depth first) whose real path lies inside ``roots``."""
    for top, dirs, files in os.walk(base, followlinks=False):
        if stop.is_set():
            return
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(top, name)
            if path.is_symlink():
                real = Path(os.path.realpath(path))
                if not within(real, roots) or not real.is_file():
                    continue
            yield path


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run blocking ``work(stop)`` in a worker thread; on cancel, ``stop`` is set.

    The caller's task is cancelled at once; the thread sees ``stop`` at its next check
    and ends soon after, instead of walking a large tree for nobody.
    """
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def relative_posix(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` with ``/`` separators, for glob matching."""
    return path.relative_to(base).as_posix()


__all__ = [
    "SKIPPED_DIRS",
    "glob_to_regex",
    "in_thread",
    "relative_posix",
    "split_static",
    "walk_files",
]

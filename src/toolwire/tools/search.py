"""What ``Glob`` and ``Grep`` share: glob patterns, a safe directory walk, worker threads.

Glob syntax: ``*`` any run of characters within a path segment, ``?`` one character,
``[abc]`` / ``[!abc]`` a class, ``{a,b}`` alternatives, ``**`` any number of directories
(as a whole segment). A pattern without ``/`` matches a file's name at any depth when
used as a ``Grep`` filter, as ripgrep's ``--glob`` does.

The walk yields regular files only (a named pipe, socket or device is skipped: opening
a pipe blocks), never follows a symlinked directory, skips version-control and cache
directories, and yields a symlinked file only when its target is a regular file inside
the roots, so a search cannot read outside the session's directories either. It goes
by directory descriptors (``tools.nofollow``): each directory is entered with
``O_NOFOLLOW`` relative to its parent's descriptor, so one swapped for a link after it
was listed is not entered, and each file is opened relative to its directory's.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from toolwire.tools.nofollow import (
    DIRECTORY_FLAGS,
    open_directory,
    open_regular,
    open_regular_at,
)
from toolwire.tools.paths import within
from toolwire.tools.threads import off_loop

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


@dataclass(frozen=True, slots=True)
class Found:
    """A regular file the walk found, and how to open it without a race.

    ``dir_fd`` is its directory's descriptor, open only until the walk moves on; a
    symlinked file has ``target``, its resolved target (checked inside the roots).
    """

    path: Path
    dir_fd: int
    name: str
    target: Path | None = None

    def open(self) -> int:
        """A read-only descriptor of the file; ``OSError`` if it is no regular file now."""
        if self.target is not None:
            return open_regular(self.target)
        return open_regular_at(self.dir_fd, self.name, self.path)


def walk_files(
    base: Path, roots: Sequence[Path], stop: threading.Event
) -> Generator[Found, None, None]:
    """Regular files under ``base`` (by name, a directory's files before its subdirectories)."""
    try:
        fd = open_directory(base)
    except OSError:
        return
    # (descriptor, path, subdirectories left; None before the directory is listed)
    stack: list[tuple[int, Path, Iterator[str] | None]] = [(fd, base, None)]
    try:
        while stack and not stop.is_set():
            fd, top, subdirs = stack[-1]
            if subdirs is None:
                files, names = _list(fd, top, roots)
                for found in files:
                    if stop.is_set():
                        return
                    yield found
                subdirs = iter(names)
                stack[-1] = (fd, top, subdirs)
            name = next(subdirs, None)
            if name is None:
                stack.pop()
                os.close(fd)
                continue
            try:
                sub = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
            except OSError:
                continue  # gone, or swapped for a link since it was listed: not entered
            stack.append((sub, top / name, None))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _list(fd: int, top: Path, roots: Sequence[Path]) -> tuple[list[Found], list[str]]:
    """The regular files and the subdirectories to enter of the directory ``fd``."""
    try:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return [], []
    files: list[Found] = []
    subdirs: list[str] = []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    subdirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                files.append(Found(top / entry.name, fd, entry.name))
            elif entry.is_symlink():
                target = _linked_file(top / entry.name, roots)
                if target is not None:
                    files.append(Found(top / entry.name, fd, entry.name, target))
        except OSError:
            continue  # gone meanwhile
    return files, subdirs


def _linked_file(link: Path, roots: Sequence[Path]) -> Path | None:
    """The real path of ``link`` when it is a regular file inside the roots."""
    real = Path(os.path.realpath(link))
    if not within(real, roots):
        return None
    try:
        return real if stat.S_ISREG(os.lstat(real).st_mode) else None
    except OSError:
        return None


async def in_thread(work: Callable[[threading.Event], T]) -> T:
    """Run blocking ``work(stop)`` in a daemon thread; on cancel, ``stop`` is set.

    The caller's task is cancelled at once; the thread sees ``stop`` at its next check
    and ends soon after, instead of walking a large tree for nobody. A thread stuck
    anyway does not hold the process at exit (``tools.threads``).
    """
    stop = threading.Event()
    try:
        return await off_loop(lambda: work(stop), "toolwire-search")
    except asyncio.CancelledError:
        stop.set()
        raise


def relative_posix(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` with ``/`` separators, for glob matching."""
    return path.relative_to(base).as_posix()


__all__ = [
    "SKIPPED_DIRS",
    "Found",
    "glob_to_regex",
    "in_thread",
    "relative_posix",
    "split_static",
    "walk_files",
]

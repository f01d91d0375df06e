"""Writing a snapshot's files back, never outside the directory they belong to.

Each path is walked from the directory down, one component at a time, with ``lstat``: a
component that is a symlink (or not a directory) stops the write, so a link planted in
the tree can never carry a restore outside the session's directories. Files are written
to a temporary name beside the target and renamed over it (a reader sees the old file or
the new one, never half); a symlink is restored as a symlink, never followed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

OUTSIDE = "its path leads through a symlink or a file; nothing outside is written"
IN_THE_WAY = "a directory with other files is in the way"
LINK = 0o120000
EXECUTABLE = 0o100755


def safe_parent(directory: Path, rel: str, *, create: bool) -> Path | None:
    """The real directory ``rel`` lives in under ``directory``, made when ``create``;
    None when a component is a symlink, not a directory, or ``rel`` climbs out."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    here = directory
    for part in parts[:-1]:
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            if not create:
                return here  # nothing below it exists either
            os.mkdir(here)
            continue
        if not stat.S_ISDIR(info.st_mode):
            return None
    return here


def remove(directory: Path, rel: str) -> str | None:
    """Delete ``rel`` and the directories it leaves empty; a reason when it may not."""
    parent = safe_parent(directory, rel, create=False)
    if parent is None:
        return OUTSIDE
    target = parent / rel.rsplit("/", 1)[-1]
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(target).st_mode):
            return IN_THE_WAY
        os.unlink(target)
    while parent != directory:
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = parent.parent
    return None


def write(directory: Path, rel: str, mode: int, data: bytes) -> str | None:
    """Put ``data`` at ``rel`` as git mode ``mode`` (file, executable or symlink)."""
    parent = safe_parent(directory, rel, create=True)
    if parent is None:
        return OUTSIDE
    target = parent / rel.rsplit("/", 1)[-1]
    try:
        old = os.lstat(target)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISDIR(old.st_mode):
        try:
            os.rmdir(target)  # left empty by the removals, which run first
        except OSError:
            return IN_THE_WAY
    temp = parent / f".{target.name}.toolwire-restore"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    try:
        if mode == LINK:
            os.symlink(os.fsdecode(data), temp)
        else:
            _write_file(temp, data, mode, old)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):  # never left in the user's project
            os.unlink(temp)
        raise
    return None


def _write_file(temp: Path, data: bytes, mode: int, old: os.stat_result | None) -> None:
    # A file that is still there keeps its permission bits (git stores only the
    # executable bit); a new one gets the umask's, as any program's new file would.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        _write_all(fd, data)
        bits = os.fstat(fd).st_mode & 0o777
        if old is not None and stat.S_ISREG(old.st_mode):
            bits = old.st_mode & 0o777
        execs = (bits & 0o444) >> 2
        bits = bits | execs if mode == EXECUTABLE else bits & ~0o111
        os.fchmod(fd, bits)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


__all__ = ["IN_THE_WAY", "OUTSIDE", "remove", "safe_parent", "write"]

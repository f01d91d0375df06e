"""Whether a restore can do what it plans, asked before it changes anything.

A restore is all or nothing: every file it would write or remove is checked first, and one
that cannot be done (a path through a symlink, a directory in the way, a read-only or
immutable directory, an immutable file) stops the whole restore before any file moves.
The checks take the restore's own removals into account: a symlink or a file on the way
that the restore removes first is no obstacle.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import sys
from collections.abc import Collection
from pathlib import Path

from toolwire.checkpoints.files import IN_THE_WAY, OUTSIDE

READ_ONLY = "its directory cannot be written (read-only)"
IMMUTABLE = "it is immutable or append-only (chattr)"
DIR_IMMUTABLE = "its directory is immutable or append-only (chattr)"
_GETFLAGS = 0x80086601  # FS_IOC_GETFLAGS
_FIXED = 0x10 | 0x20  # FS_IMMUTABLE_FL | FS_APPEND_FL


def blocker(directory: Path, rel: str, *, write: bool, removing: Collection[str]) -> str | None:
    """Why ``rel`` (under ``directory``) cannot be written (``write``) or removed; None
    when it can. ``removing``: the paths the same restore removes before it writes."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return OUTSIDE
    here, existing = directory, directory
    for i, part in enumerate(parts[:-1]):
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            break  # made by the write: the nearest existing directory is checked below
        if not stat.S_ISDIR(info.st_mode):
            if not write or "/".join(parts[: i + 1]) not in removing:
                return OUTSIDE
            break  # removed first, then made a directory
        existing = here
    else:
        target = here / parts[-1]
        if _in_the_way(directory, target, removing) if write else _is_dir(target):
            return IN_THE_WAY
        if _fixed(target, follow=False):
            return IMMUTABLE
    return _directory_blocks(existing)


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _in_the_way(directory: Path, target: Path, removing: Collection[str]) -> bool:
    """A directory at ``target`` holding anything the restore does not remove."""
    if not _is_dir(target):
        return False
    for base, dirs, names in os.walk(target):
        links = [d for d in dirs if os.path.islink(os.path.join(base, d))]  # not walked into
        for name in (*names, *links):
            if os.path.relpath(os.path.join(base, name), directory) not in removing:
                return True
    return False


def _directory_blocks(directory: Path) -> str | None:
    if not os.access(directory, os.W_OK | os.X_OK):
        return READ_ONLY
    return DIR_IMMUTABLE if _fixed(directory, follow=True) else None


def _fixed(path: Path, *, follow: bool) -> bool:
    """Immutable or append-only (Linux file attributes): renaming over it, removing it or
    creating in it fails even for root. False where the flags cannot be read."""
    if not sys.platform.startswith("linux"):
        return False
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False  # absent, a symlink or unreadable: nothing to say
    try:
        got = fcntl.ioctl(fd, _GETFLAGS, struct.pack("i", 0))
        return bool(struct.unpack("i", got)[0] & _FIXED)
    except OSError:
        return False
    finally:
        os.close(fd)


__all__ = ["DIR_IMMUTABLE", "IMMUTABLE", "READ_ONLY", "blocker"]

"""Opening checked paths without following links and without blocking on special files.

Tools work on paths ``tools.paths`` checked: absolute, every link resolved, inside the
session's roots. Between that check and the use the path can change: a file, or a
directory on the way, swapped for a link to somewhere outside. So a checked path is never
resolved again. It is opened one component at a time, each relative to the descriptor of
the directory before it, from ``/``, with ``O_NOFOLLOW`` (openat(2)): a checked path has
no link on it, so a link met on the way is a change since the check (or a link loop the
check could not resolve), and the open fails. Starting at ``/`` rather than at the
root's descriptor is the same walk for a resolved path, and catches a swap above the
root too.

The file itself is opened with ``O_NONBLOCK`` and checked with ``fstat`` before a byte is
read: opening a named pipe for reading otherwise waits for a writer, forever (fifo(7));
anything but a regular file is refused. The check is on the open descriptor, so a file
swapped for a pipe after an earlier ``lstat`` is refused as well.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from toolwire.safe_read import kind_of

# POSIX flags; read with getattr so that importing the package never fails elsewhere.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_FILE_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
)


class UnsafeFileError(OSError):
    """A path a tool must not open: not a regular file, or a link where the check saw none.

    ``strerror`` is the whole message (one line, naming the path).
    """


def not_regular(path: Path | str, mode: int) -> UnsafeFileError:
    """The error for a path that is not a regular file."""
    return UnsafeFileError(
        errno.EINVAL, f"{path} is {kind_of(mode)}, not a regular file; it was not opened."
    )


def link_met(path: Path | str) -> UnsafeFileError:
    """The error for a symbolic link met on a checked path."""
    return UnsafeFileError(
        errno.ELOOP,
        f"{path} has a symbolic link on it that its check did not see (it was swapped "
        "in since, or it loops); the link was not followed.",
    )


def open_directory(path: Path | str, *, create: bool = False) -> int:
    """A descriptor of the directory ``path``, reached without following any link.

    ``create`` makes missing directories on the way (mode ``0o777`` less the umask).
    ``FileNotFoundError`` when one is missing otherwise; ``UnsafeFileError`` for a link.
    """
    full = Path(os.path.abspath(path))
    fd = os.open(full.anchor, DIRECTORY_FLAGS)
    for part in full.parts[1:]:
        fd = _enter(fd, part, full, create=create)  # closes the parent's descriptor, even on error
    return fd


def _enter(fd: int, name: str, full: Path, *, create: bool) -> int:
    """The descriptor of directory ``name`` under ``fd``; ``fd`` is closed either way."""
    try:
        try:
            return os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile by someone else
                os.mkdir(name, 0o777, dir_fd=fd)
            return os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _explain(exc, fd, name, full) from None
    finally:
        os.close(fd)


def open_regular(path: Path | str) -> int:
    """A read-only descriptor of the regular file ``path`` (see the module docstring)."""
    full = Path(os.path.abspath(path))
    parent = open_directory(full.parent)
    try:
        return open_regular_at(parent, full.name, full)
    finally:
        os.close(parent)


def open_regular_at(dir_fd: int, name: str, shown: Path | str) -> int:
    """A read-only descriptor of the regular file ``name`` in the directory ``dir_fd``.

    ``shown`` is the path the errors name.
    """
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _explain(exc, dir_fd, name, shown) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(shown, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path | str) -> bytes:
    """The bytes of the regular file ``path``, opened as ``open_regular`` does."""
    with open(open_regular(path), "rb") as handle:
        return handle.read()


def _explain(exc: OSError, dir_fd: int, name: str, shown: Path | str) -> OSError:
    """``exc`` naming the whole path, or the clearer error a link or special file gets."""
    if exc.errno != errno.ENOENT:
        try:
            mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            pass
        else:
            if stat.S_ISLNK(mode):
                return link_met(shown)
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                return not_regular(shown, mode)  # a socket: ENXIO, a device: anything
    return OSError(exc.errno, exc.strerror, str(shown))


__all__ = [
    "DIRECTORY_FLAGS",
    "UnsafeFileError",
    "kind_of",
    "link_met",
    "not_regular",
    "open_directory",
    "open_regular",
    "open_regular_at",
    "read_regular",
]

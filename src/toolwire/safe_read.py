"""Reading the files toolwire opens on its own, never stalled or bloated by one.

Project files are read without anyone asking (instructions, custom commands, agent
definitions, hook settings, the config and toolwire's own state files), so a cloned
repository decides what they are. A named pipe there would block ``open`` until a writer
comes, forever (fifo(7)); a link to ``/dev/zero`` would be read until memory runs out. So
each is opened with ``O_NONBLOCK`` (an open of a pipe returns at once), checked on the
opened descriptor with ``fstat`` (a file swapped after an earlier check is caught too),
refused unless it is a regular file, and read up to a cap: a bigger file is refused
whole, or cut at the cap when the caller takes a head (``head=True``). What is refused
raises ``NotReadError``, whose message is one line naming the file and why it was skipped.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MAX_STATE_BYTES = 16 * 1024 * 1024
"""The cap on toolwire's own state files (trusted hooks, stored keys): far above what
they hold, so a real one is never refused."""
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),
)


class NotReadError(OSError):
    """A file toolwire did not read: ``strerror`` is the whole line (path and reason)."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, for messages: "a named pipe (FIFO)", "a socket"..."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a special file"


def read_file(
    path: Path | str,
    cap: int,
    *,
    head: bool = False,
    follow_links: bool = True,
    dir_fd: int | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them (module doc).

    ``head``: a larger file gives its first ``cap`` bytes (else ``NotReadError``);
    ``follow_links=False``: a link as the last component is refused; ``dir_fd``: ``path``
    is relative to that directory. ``FileNotFoundError`` when it does not exist,
    ``NotReadError`` for a file that is not read, ``OSError`` else."""
    try:
        fd = os.open(path, _FLAGS | (0 if follow_links else _NOFOLLOW), dir_fd=dir_fd)
    except OSError as exc:
        raise _explained(exc, path) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadError(
                errno.EINVAL, f"{path} is {kind_of(info.st_mode)}, not a regular file"
            )
        if info.st_size > cap and not head:
            raise _too_big(path, cap)
        os.set_blocking(fd, True)
        data = _read_upto(fd, cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:
        if not head:
            raise _too_big(path, cap)  # it grew while read, or stat said less
        data = data[:cap]
    return data


def _read_upto(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(limit - got, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _too_big(path: Path | str, cap: int) -> NotReadError:
    return NotReadError(errno.EFBIG, f"{path} is over {cap:,} bytes (the cap for this file)")


def _explained(exc: OSError, path: Path | str) -> OSError:
    """``exc`` for a missing file; else a ``NotReadError`` line (ELOOP: a link refused)."""
    if isinstance(exc, FileNotFoundError):
        return exc
    if exc.errno == errno.ELOOP:
        return NotReadError(exc.errno, f"{path} is a symbolic link, which is not followed here")
    if exc.errno == errno.ENXIO:  # what opening a socket gives
        return NotReadError(exc.errno, f"{path} is a socket, not a regular file")
    return NotReadError(exc.errno or errno.EIO, f"{path} cannot be read ({exc.strerror or exc})")


__all__ = ["MAX_STATE_BYTES", "NotReadError", "kind_of", "read_file"]

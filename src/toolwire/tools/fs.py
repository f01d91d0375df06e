"""The file-system port the tools read and write through, and its local implementation.

The agent plugs in an implementation backed by the ACP client (``fs/read_text_file``,
``fs/write_text_file``) when the editor offers them, so the model reads the buffers the
user sees, unsaved edits included. Either implementation must:

* take absolute, already checked paths (``tools.paths`` did the checking); the local
  one never resolves them again: it follows no link anywhere on the path (see
  ``tools.nofollow``), so a path swapped for a link since its check is refused;
* the local one touches regular files only: a named pipe, socket or device is refused
  (``OSError``), never opened for its content, so no call blocks on one (the tools
  refuse them before asking any port, so an editor is not asked about one either);
* raise ``FileNotFoundError`` when the file does not exist (the ACP implementation maps
  the client's "not found" error to it), ``OSError`` for other failures, and
  ``UnicodeDecodeError`` for a file that is not UTF-8;
* keep text exactly as it is (no newline translation), so an edit touches only what
  it replaces;
* never leave a file half-written: a write either replaces the whole file or fails and
  leaves the old content in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Protocol, runtime_checkable

from toolwire.tools.nofollow import link_met, not_regular, open_directory, read_regular
from toolwire.tools.threads import off_loop


@runtime_checkable
class FileSystem(Protocol):
    """Where tools read and write text files."""

    async def read_text(self, path: Path) -> str:
        """The whole file as text; ``FileNotFoundError`` when it does not exist."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Replace (or create) the file with ``content``, atomically."""
        ...


class LocalFileSystem:
    """The local disk. Blocking calls run in daemon threads (``tools.threads``)."""

    async def read_text(self, path: Path) -> str:
        """The file's bytes decoded as UTF-8 (strict: a binary file raises)."""
        data = await off_loop(lambda: read_regular(path))
        return data.decode("utf-8")

    async def write_text(self, path: Path, content: str) -> None:
        """Atomic replace; see ``atomic_write``. Cancelling the caller lets it finish."""
        data = content.encode("utf-8")
        # Shielded: once started, the write completes or fails as a whole; a cancelled
        # caller must not leave a temporary file behind or an unknown outcome.
        await asyncio.shield(off_loop(lambda: atomic_write(Path(path), data)))


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    ``path`` is taken as checked: absolute, with no symbolic link on it (as
    ``os.path.realpath`` returns it). It is not resolved again: its directory is opened
    without following any link (``tools.nofollow``), missing directories are created on
    the way, and everything after happens relative to that descriptor, so a directory
    swapped for a link meanwhile cannot redirect the write. A link at ``path`` itself is
    refused, and so is anything but a regular file there (a named pipe, a directory).

    The bytes go to a temporary file in the same directory (same file system, so the
    rename is atomic), are flushed and fsynced, get the old file's permission bits (a new
    file gets the usual ``0o666`` less the umask), and then replace the target with a
    rename, which replaces whatever name is there and never follows a link at the
    destination (rename(2)). On any failure the temporary file is removed and the
    original is untouched.
    """
    target = Path(os.path.abspath(path))
    parent = open_directory(target.parent, create=True)
    try:
        _replace_in(parent, target, data)
    finally:
        os.close(parent)


def _replace_in(parent: int, target: Path, data: bytes) -> None:
    name = target.name
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        mode: int | None = None
    else:
        if stat.S_ISLNK(info.st_mode):
            raise link_met(target)
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(target, info.st_mode)
        mode = stat.S_IMODE(info.st_mode)
    fd, tmp_name = _create_sibling(parent, target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp_name, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name, dir_fd=parent)
        raise
    # Makes the rename itself durable; not every platform or file system allows it.
    with contextlib.suppress(OSError):
        os.fsync(parent)


def _create_sibling(parent: int, target: Path) -> tuple[int, str]:
    """A new, empty temporary file next to ``target`` (in ``parent``), open for writing.

    Created with mode ``0o666`` so the kernel applies the process umask, as for any new
    file (``tempfile.mkstemp`` makes ``0o600``, and reading the umask means setting it,
    process-wide, which would race other threads creating files).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(name, flags, 0o666, dir_fd=parent), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target.parent))


__all__ = ["FileSystem", "LocalFileSystem", "atomic_write"]

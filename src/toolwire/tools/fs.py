"""The file-system port the tools read and write through, and its local implementation.

The agent plugs in an implementation backed by the ACP client (``fs/read_text_file``,
``fs/write_text_file``) when the editor offers them, so the model reads the buffers the
user sees, unsaved edits included. Either implementation must:

* take absolute, already checked paths (``tools.paths`` did the checking);
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
    """The local disk. Blocking calls run in a worker thread, off the event loop."""

    async def read_text(self, path: Path) -> str:
        """The file's bytes decoded as UTF-8 (strict: a binary file raises)."""
        data = await asyncio.to_thread(Path(path).read_bytes)
        return data.decode("utf-8")

    async def write_text(self, path: Path, content: str) -> None:
        """Atomic replace; see ``atomic_write``. Cancelling the caller lets it finish."""
        data = content.encode("utf-8")
        # Shielded: once started, the write completes or fails as a whole; a cancelled
        # caller must not leave a temporary file behind or an unknown outcome.
        await asyncio.shield(asyncio.to_thread(atomic_write, Path(path), data))


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    The bytes go to a temporary file in the same directory (same file system, so the
    rename is atomic), are flushed and fsynced, get the old file's permission bits (a new
    file gets the usual ``0o666`` less the umask), and then replace the target with
    ``os.replace``. A symlink at ``path`` is kept: its target is what gets replaced. On
    any failure the temporary file is removed and the original is untouched. Missing
    parent directories are created.
    """
    target = Path(os.path.realpath(path))
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp_name = _create_sibling(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(parent)


def _create_sibling(target: Path) -> tuple[int, str]:
    """A new, empty temporary file next to ``target``, opened for writing.

    Created with mode ``0o666`` so the kernel applies the process umask, as for any new
    file (``tempfile.mkstemp`` makes ``0o600``, and reading the umask means setting it,
    process-wide, which would race other threads creating files).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target.parent))


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not every platform or file system allows it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["FileSystem", "LocalFileSystem", "atomic_write"]

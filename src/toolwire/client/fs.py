"""``fs/read_text_file`` and ``fs/write_text_file`` for the terminal client.

Only paths inside the session directory are served (after resolving symlinks, so a link
pointing out is refused too); ACP requires absolute paths. Writes are atomic, with the
tools' ``atomic_write``: a sibling temporary file, flushed to disk, then renamed over the
target, so the user never sees a half-written file. Errors are JSON-RPC errors with a message that
says what was wrong, for the agent to show its user.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from toolwire.tools.fs import atomic_write

INVALID_PARAMS = -32602
NOT_FOUND = -32002


@dataclass(slots=True)
class FsStats:
    """Requests the agent made of the client's file system."""

    reads: int = 0
    writes: int = 0
    refused: int = 0


class FileAccess:
    """Reads and writes text files under ``root`` for an agent."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        self.stats = FsStats()

    def resolve(self, path: str) -> Path:
        """The real path of ``path``, refused unless absolute and inside ``root``."""
        candidate = Path(path)
        if not candidate.is_absolute():
            self._refuse(f"ACP file paths must be absolute, got {path!r}", path)
        real = candidate.resolve()
        if not real.is_relative_to(self.root):
            self._refuse(f"{path} is outside the session directory {self.root}", path)
        return real

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text, or ``limit`` lines from the 1-based ``line``."""
        real = self.resolve(path)
        if line is not None and line < 1:
            raise RequestError(INVALID_PARAMS, f"line must be 1 or more, got {line}", None)
        try:
            text = real.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise RequestError(NOT_FOUND, f"no such file: {path}", {"uri": path}) from None
        except IsADirectoryError:
            raise RequestError(INVALID_PARAMS, f"{path} is a directory", None) from None
        except UnicodeDecodeError:
            raise RequestError(INVALID_PARAMS, f"{path} is not UTF-8 text", None) from None
        self.stats.reads += 1
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        first = (line or 1) - 1
        last = None if limit is None else first + max(limit, 0)
        return "".join(lines[first:last])

    def write(self, path: str, content: str) -> None:
        """Replace (or create) the file with ``content``, atomically."""
        real = self.resolve(path)
        if real.is_dir():
            raise RequestError(INVALID_PARAMS, f"{path} is a directory", None)
        atomic_write(real, content.encode("utf-8"))
        self.stats.writes += 1

    def _refuse(self, message: str, path: str) -> None:
        self.stats.refused += 1
        raise RequestError(INVALID_PARAMS, message, {"path": path})


__all__ = ["FileAccess", "FsStats"]

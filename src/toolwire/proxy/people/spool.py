"""Where ledger rows wait on disk while the ledger's database is down (``writer.py``).

A directory of JSON-lines files, one row a line (its values in ``COLUMNS`` order). Each
proxy process appends to a file of its own, ``rows-PID-RANDOM.jsonl``, which it holds
with an exclusive ``flock`` for as long as it runs; a file nobody holds is a stopped
process's, and the first process that locks it (at start-up, and whenever it writes to
the database again) replays it. How far a file has been replayed is kept beside it
(``NAME.offset``), so a replay cut short resumes where it stopped instead of writing
rows twice. Rows the database refused one by one are appended, with the reason, to
``rejected.jsonl``: kept for an operator, never retried.

Several replicas on one host share the directory safely: a live process's file is
locked, so only its owner reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import time
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import IO, Any

from toolwire.proxy.people.ledger import COLUMNS, LedgerRow

REJECTED = "rejected.jsonl"


def spool_directory(spec: str, configured: str = "") -> Path:
    """``[proxy] ledger_spool``, else a directory of the state home named by a digest of
    the ledger ``spec`` (a URL's password never appears in a path)."""
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    name = hashlib.sha256(spec.encode("utf-8", "replace")).hexdigest()[:16]
    return Path(base) / "toolwire" / "ledger-spool" / name


@dataclass(slots=True)
class _Held:
    """A spool file this process holds (its own, or a stopped process's it claimed)."""

    path: Path
    handle: IO[bytes]
    offset: int
    rows: int
    """Lines past ``offset``: rows still to write."""


class Spool:
    """This process's spool files in ``directory`` (see the module doc). Not thread-safe:
    the ledger's writer thread is its only user."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._own: _Held | None = None
        self._claimed: list[_Held] = []

    @property
    def rows(self) -> int:
        """Rows waiting in the files this process holds."""
        held = self._claimed + ([self._own] if self._own else [])
        return sum(h.rows for h in held)

    @property
    def own_path(self) -> Path | None:
        return self._own.path if self._own else None

    def append(self, rows: list[LedgerRow]) -> None:
        """Add ``rows`` to this process's file, on disk before this returns."""
        if self._own is None:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = self.directory / f"rows-{os.getpid()}-{secrets.token_hex(4)}.jsonl"
            handle = path.open("a+b")
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._own = _Held(path, handle, 0, 0)
        data = b"".join(json.dumps(astuple(r)).encode() + b"\n" for r in rows)
        self._own.handle.seek(0, os.SEEK_END)
        self._own.handle.write(data)
        self._own.handle.flush()
        os.fsync(self._own.handle.fileno())
        self._own.rows += len(rows)

    def claim(self) -> int:
        """Lock the files of processes that stopped; the rows they hold."""
        if not self.directory.is_dir():
            return 0
        held = {h.path for h in self._claimed} | ({self._own.path} if self._own else set())
        found = 0
        for path in sorted(self.directory.glob("rows-*.jsonl")):
            if path in held:
                continue
            claimed = _lock(path)
            if claimed is not None:
                self._claimed.append(claimed)
                found += claimed.rows
        return found

    def take(self, limit: int) -> tuple[list[LedgerRow], list[str]]:
        """Up to ``limit`` rows from the held files, oldest file first, marked replayed
        (the caller keeps them until they are written); and the lines that could not be
        read back (a line cut short when a process died mid-write)."""
        rows: list[LedgerRow] = []
        bad: list[str] = []
        for held in [*self._claimed, *([self._own] if self._own else [])]:
            while held.rows and len(rows) < limit:
                held.handle.seek(held.offset)
                line = held.handle.readline()
                held.offset += len(line)
                held.rows -= 1
                row = _row(line)
                if row is None:
                    bad.append(line.decode("utf-8", "replace").strip())
                else:
                    rows.append(row)
            self._done(held)
            if len(rows) >= limit:
                break
        return rows, bad

    def reject(self, row: LedgerRow, reason: str) -> None:
        """Keep a row the database refused on its own, with why, for an operator."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {
            "at": time.time(),
            "reason": reason,
            "row": dict(zip(COLUMNS, astuple(row), strict=True)),
        }
        with (self.directory / REJECTED).open("ab") as out:
            out.write(json.dumps(record).encode() + b"\n")

    def close(self) -> None:
        """Release every file (their rows stay for the next process that claims them)."""
        for held in [*self._claimed, *([self._own] if self._own else [])]:
            held.handle.close()
        self._claimed, self._own = [], None

    def _done(self, held: _Held) -> None:
        """Record how far ``held`` was replayed; a file replayed to its end is removed."""
        offset_file = held.path.with_suffix(".offset")
        if held.rows:
            temporary = offset_file.with_suffix(".tmp")
            temporary.write_text(str(held.offset))
            os.replace(temporary, offset_file)
            return
        with contextlib.suppress(FileNotFoundError):
            offset_file.unlink()
        held.path.unlink(missing_ok=True)
        held.handle.close()
        if held is self._own:
            self._own = None
        else:
            self._claimed.remove(held)


def _lock(path: Path) -> _Held | None:
    """``path`` locked for this process, with its replay offset; None when a live process
    holds it (or it went away)."""
    try:
        handle = path.open("r+b")
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    offset_file = path.with_suffix(".offset")
    try:
        offset = int(offset_file.read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        offset = 0
    handle.seek(offset)
    rows = sum(1 for _ in handle)
    return _Held(path, handle, offset, rows)


def _row(line: bytes) -> LedgerRow | None:
    try:
        values: Any = json.loads(line)
        return LedgerRow(*values) if isinstance(values, list) and line.endswith(b"\n") else None
    except (ValueError, TypeError):
        return None


__all__ = ["REJECTED", "Spool", "spool_directory"]

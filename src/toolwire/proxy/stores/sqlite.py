"""Session state in a SQLite file (one JSON row per session), kept across restarts."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from toolwire.proxy.state import SessionState
from toolwire.proxy.stores.schema import sqlite_schema

_T = TypeVar("_T")
_SCHEMA = "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, state TEXT NOT NULL)"
_UPSERT = (
    "INSERT INTO sessions (id, state) VALUES (?, ?) "
    "ON CONFLICT(id) DO UPDATE SET state = excluded.state"
)


def shared_file(path: str | Path, schema: Sequence[str], component: str) -> sqlite3.Connection:
    """A SQLite file several proxy processes share: autocommit (each statement its own
    transaction; a caller opens one explicitly where it needs more), usable from any
    thread (the caller holds a lock around it), waiting up to 30 s for another process's
    write lock; ``schema`` (``component``'s tables) made under that lock (``schema.py``)."""
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
    sqlite_schema(db, component, [schema])
    return db


class SQLiteStore:
    """Session state in a SQLite file, shareable by proxy processes on one host."""

    blocking = True  # another process may hold the file's write lock

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = shared_file(path, [_SCHEMA], "sessions")

    def load(self, session: str) -> SessionState:
        with self._lock:
            row = self._db.execute("SELECT state FROM sessions WHERE id = ?", (session,)).fetchone()
        return SessionState.from_json(row[0]) if row else SessionState()

    def save(self, session: str, state: SessionState) -> None:
        with self._lock, self._db:
            self._db.execute(_UPSERT, (session, state.to_json()))

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        # BEGIN IMMEDIATE takes the file's write lock before reading, so another proxy
        # process sharing the file waits instead of overwriting this change.
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT state FROM sessions WHERE id = ?", (session,)
                ).fetchone()
                state = SessionState.from_json(row[0]) if row else SessionState()
                result = change(state)
                self._db.execute(_UPSERT, (session, state.to_json()))
            except BaseException:
                # SQLite may have rolled back on its own (a full disk, a busy timeout): a
                # second ROLLBACK would fail and hide why (sqlite.org/lang_transaction.html).
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def close(self) -> None:
        self._db.close()


__all__ = ["SQLiteStore"]

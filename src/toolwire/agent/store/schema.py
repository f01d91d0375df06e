"""The session database: where it lives, its schema, and its migrations.

The schema is versioned by ``PRAGMA user_version``.
``MIGRATIONS[i]`` takes a database from version ``i`` to ``i + 1``; each runs in one
transaction together with the version bump, so a crash leaves the old version intact.
A database from a newer toolwire (a version above ``SCHEMA_VERSION``) is refused rather
than guessed at.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from toolwire.errors import ToolwireError, UsageError

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: sessions, their history, and the transcript replayed on session/load.
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        cwd TEXT NOT NULL,
        additional_dirs TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        title TEXT,
        backend TEXT,
        mode TEXT,
        config TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX sessions_recent ON sessions (updated_at DESC);
    CREATE INDEX sessions_cwd_recent ON sessions (cwd, updated_at DESC);
    CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        backend TEXT,
        parts TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE transcript (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        ts REAL NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    """,
    # 1 -> 2: every toolCallId a session issued, so none is issued twice after a restart;
    # filled from the tool calls the transcripts already show the editor.
    """
    CREATE TABLE tool_call_ids (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO tool_call_ids (session_id, id)
    SELECT session_id, CASE WHEN json_valid(payload)
        THEN json_extract(payload, '$.toolCallId') END AS call_id
    FROM transcript WHERE call_id IS NOT NULL
    """,
    # 2 -> 3: the prompt index /rewind reads (one row per prompt that reached the model:
    # where its message and transcript start, the conversation record before it), and
    # the state one /rewind undo puts back (JSON: the cut messages, lines, rows, record).
    """
    CREATE TABLE prompts (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        first_line TEXT NOT NULL,
        ts REAL NOT NULL,
        message_index INTEGER NOT NULL,
        transcript_len INTEGER NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (session_id, number)
    ) WITHOUT ROWID;
    CREATE TABLE rewind_undo (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        state TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    # 3 -> 4: subagents are sessions of their own, linked to the session that started
    # them: deleted with it, left out of session/list, replayed with it.
    """
    ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions (id) ON DELETE CASCADE;
    CREATE INDEX sessions_parent ON sessions (parent_id)
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaVersionError(UsageError):
    """The database was written by a newer toolwire."""


class StoreError(ToolwireError):
    """The session database could not be read or written (locked, disk full, ...)."""


def store_error(exc: sqlite3.Error, path: str, busy_timeout: float) -> StoreError:
    """``exc`` as one line that says what happened to which file and what to do."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(
            f"the session database {path} is locked by another process (waited "
            f"{busy_timeout:g} s); try again once it is done"
        )
    if code == sqlite3.SQLITE_FULL:
        return StoreError(
            f"the disk holding the session database {path} is full; free some space and try again"
        )
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return StoreError(f"the session database {path} failed: {detail}")


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/toolwire/sessions.db``, by default ``~/.local/share/toolwire/...``."""
    base = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "toolwire" / "sessions.db"


def prepare_file(path: Path) -> None:
    """Create the directory and an empty database file readable by the user only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def migrate(db: sqlite3.Connection, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Bring ``db`` (autocommit mode) up to ``len(migrations)``; the version it started at."""
    (start,) = db.execute("PRAGMA user_version").fetchone()
    if start > len(migrations):
        raise SchemaVersionError(
            f"the session database has schema version {start}, newer than this toolwire "
            f"understands ({len(migrations)}); upgrade toolwire or use another database"
        )
    for version in range(start, len(migrations)):
        # executescript would commit on its own; one explicit transaction per step keeps
        # the schema change and the version bump together.
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(migrations[version]):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {version + 1}")
        except BaseException:
            rollback(db)
            raise
        db.execute("COMMIT")
    return int(start)


def rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction, keeping the error that failed it.

    SQLite may already have rolled back on its own (on SQLITE_FULL, SQLITE_IOERR,
    SQLITE_BUSY, SQLITE_NOMEM: https://www.sqlite.org/lang_transaction.html), and then
    a ROLLBACK fails with "cannot rollback - no transaction is active", which would
    hide the real cause.
    """
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def _statements(script: str) -> list[str]:
    """The ``;``-separated statements of a migration (they hold no ``;`` in literals)."""
    return [s.strip() for s in script.split(";") if s.strip()]


__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SchemaVersionError",
    "StoreError",
    "default_db_path",
    "migrate",
    "prepare_file",
    "rollback",
    "store_error",
]

"""Sessions on disk: SQLite in the user's data directory, so sessions survive restarts.

Two records per session, each authoritative for its reader:

* ``messages``: the provider-neutral history (``history.Message``), what backends
  translate for the model, stored losslessly (thinking, signatures, ``backend``);
* ``transcript``: the ACP ``session/update`` payloads to replay on ``session/load``,
  recorded by the agent in their final, consolidated form (one ``agent_message_chunk``
  per message, one ``tool_call`` per call in its end state with its diff, the last
  ``plan``), never the stream of deltas. A history cannot rebuild what the editor was
  shown (titles, diffs, locations, exit codes), so the editor's view is kept as is.

Next to them, ``tool_call_ids``: every ``toolCallId`` the session ever issued, written
as it is issued, so no later process issues one again (``ids.IdGuard``).

One connection per store, WAL, foreign keys on; use a store from the thread that opened
it (the agent's: ``store_worker``, off the event loop). Schema and file: ``store_schema``.

Every text it writes is encodable (``toolwire.backends.encodable``: a lone surrogate
from a prompt becomes U+FFFD; the JSON columns keep it escaped), so nothing a client or
a model sends can make a write, or a later read, fail. SQLite's own failures leave as
one ``StoreError`` line saying what happened ("locked by another process", "the disk
... is full"), never "cannot rollback".
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import update_wrapper
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from toolwire.agent.store_schema import (
    SCHEMA_VERSION,
    StoreError,
    default_db_path,
    migrate,
    prepare_file,
    rollback,
    store_error,
)
from toolwire.backends import encodable
from toolwire.config.choices import MODES, Mode, one_of
from toolwire.errors import UsageError
from toolwire.history import Message
from toolwire.history.jsonform import dumps, message_from_dict, message_to_dict

_UNSET: Any = object()
_P = ParamSpec("_P")
_R = TypeVar("_R")
BUSY_TIMEOUT_S = 5.0  # how long a write waits for another process's lock


def _sqlite_errors(
    method: Callable[Concatenate[SessionDatabase, _P], _R],
) -> Callable[Concatenate[SessionDatabase, _P], _R]:
    """Let SQLite's errors out of ``method`` as one clear ``StoreError`` line."""

    def translated(self: SessionDatabase, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, self.busy_timeout) from exc

    update_wrapper(translated, method)  # its name and docstring
    return translated


class SessionNotFoundError(UsageError):
    """No session has that id."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session's fields (not its history). Times are Unix seconds."""

    id: str
    cwd: str
    additional_dirs: tuple[str, ...]
    created_at: float
    updated_at: float
    title: str | None
    backend: str | None
    mode: Mode | None
    config: Mapping[str, Any]

    @property
    def updated_at_iso(self) -> str:
        """``updated_at`` in ISO 8601 (UTC, ``Z``), as ACP ``session/list`` gives it."""
        moment = datetime.fromtimestamp(self.updated_at, UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SessionDatabase:
    """The agent's SQLite session database.

    ``path=None`` is ``default_db_path()``; ``":memory:"`` works. ``busy_timeout``: the
    seconds a write waits for another process's lock before it fails (``StoreError``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = str(default_db_path() if path is None else path)
        self.busy_timeout = busy_timeout
        self._clock = clock
        if self.path != ":memory:":
            prepare_file(Path(self.path))
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, busy_timeout) from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA synchronous = NORMAL")
            migrate(self._db)
        except sqlite3.Error as exc:
            self._db.close()
            raise store_error(exc, self.path, busy_timeout) from exc
        except BaseException:
            self._db.close()
            raise

    @property
    @_sqlite_errors
    def schema_version(self) -> int:
        """The schema version of the open database (``SCHEMA_VERSION`` once open)."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def create(
        self,
        cwd: str,
        additional_dirs: Iterable[str] = (),
        *,
        session_id: str | None = None,
        title: str | None = None,
        backend: str | None = None,
        mode: Mode | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> SessionRecord:
        """A new session (``session_id`` defaults to a fresh UUID)."""
        sid = session_id or str(uuid.uuid4())
        now = self._clock()
        with self._transaction():
            self._sql(
                "INSERT INTO sessions (id, cwd, additional_dirs, created_at, updated_at,"
                " title, backend, mode, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, cwd, dumps(list(additional_dirs)), now, now, title, backend, mode,
                 dumps(dict(config or {}))),
            )  # fmt: skip
        return self._require(sid)

    @_sqlite_errors
    def get(self, session_id: str) -> SessionRecord | None:
        """The session, or None when there is none with that id."""
        row = self._sql(f"{_SELECT} WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else _record(row)

    @_sqlite_errors
    def list_sessions(
        self, *, cwd: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[SessionRecord]:
        """Sessions, most recently updated first, optionally only those in ``cwd``."""
        where, params = ("WHERE cwd = ?", [cwd]) if cwd is not None else ("", [])
        sql = f"{_SELECT} {where} ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?"
        rows = self._sql(sql, (*params, -1 if limit is None else limit, offset))
        return [_record(row) for row in rows]

    def update(
        self,
        session_id: str,
        *,
        title: str | None = _UNSET,
        backend: str | None = _UNSET,
        mode: Mode | None = _UNSET,
        config: Mapping[str, Any] = _UNSET,
        config_values: Mapping[str, Any] | None = None,
    ) -> SessionRecord:
        """Set the given fields (None clears a text field); ``updated_at`` moves on.

        ``config`` replaces the whole config; ``config_values`` sets those keys, keeping
        the others (read in the same transaction, so another process's keys stay).
        """
        changes = {"title": title, "backend": backend, "mode": mode}
        columns = {k: v for k, v in changes.items() if v is not _UNSET}
        with self._transaction():
            self._touch(session_id)
            if config_values:
                base = self._require(session_id).config if config is _UNSET else config
                config = {**base, **config_values}
            if config is not _UNSET:
                columns["config"] = dumps(dict(config))
            for column, value in columns.items():  # column names come from the code above
                self._sql(f"UPDATE sessions SET {column} = ? WHERE id = ?", (value, session_id))
        return self._require(session_id)

    def set_config_value(self, session_id: str, key: str, value: Any) -> SessionRecord:
        """Set one config value, keeping the others."""
        return self.update(session_id, config_values={key: value})

    def add_call_ids(self, session_id: str, ids: Iterable[str]) -> None:
        """Record ``toolCallId``s the session issued (each is kept once)."""
        with self._transaction():
            self._touch(session_id)
            self._add_call_ids(session_id, ids)

    @_sqlite_errors
    def call_ids(self, session_id: str) -> set[str]:
        """Every ``toolCallId`` the session issued, in any process."""
        rows = self._sql("SELECT id FROM tool_call_ids WHERE session_id = ?", (session_id,))
        return {call_id for (call_id,) in rows}

    def append(
        self,
        session_id: str,
        *,
        messages: Iterable[Message] = (),
        updates: Iterable[Mapping[str, Any]] = (),
        call_ids: Iterable[str] = (),
    ) -> None:
        """Add to the history and the transcript together, in one transaction.

        ``updates`` are ``session/update`` payloads (the ``update`` objects, without the
        session id); ``call_ids`` the ``toolCallId``s they issued. A turn recorded this
        way is on disk whole or not at all.
        """
        message_rows = [_message_row(m) for m in messages]
        now = self._clock()
        update_rows = [(now, dumps(dict(u))) for u in updates]
        with self._transaction():
            self._touch(session_id)
            self._insert("messages", _MESSAGE_COLUMNS, session_id, message_rows)
            self._insert("transcript", "ts, payload", session_id, update_rows)
            self._add_call_ids(session_id, call_ids)

    def append_messages(self, session_id: str, messages: Iterable[Message]) -> None:
        """Add messages at the end of the session's history."""
        self.append(session_id, messages=messages)

    @_sqlite_errors
    def messages(self, session_id: str) -> list[Message]:
        """The session's history, in order."""
        rows = self._sql(
            "SELECT role, backend, parts FROM messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        return [
            message_from_dict({"role": role, "backend": backend, "parts": json.loads(parts)})
            for role, backend, parts in rows
        ]

    def replace_messages(self, session_id: str, messages: Iterable[Message]) -> None:
        """Replace the whole history (after a compaction, say) in one transaction."""
        rows = [_message_row(m) for m in messages]
        with self._transaction():
            self._touch(session_id)
            self._sql("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._insert("messages", _MESSAGE_COLUMNS, session_id, rows)

    def replace_parts(self, session_id: str, changes: Iterable[tuple[Message, Message]]) -> int:
        """Rewrite stored messages in place: a message whose parts are ``old``'s gets
        ``new``'s. Matched by content, not position (another window may have appended
        meanwhile, and its messages stay); how many were rewritten."""
        pairs = [(message_to_dict(old)["parts"], _message_row(new)[2]) for old, new in changes]
        done = 0
        with self._transaction():
            self._touch(session_id)
            query = "SELECT seq, parts FROM messages WHERE session_id = ? ORDER BY seq"
            for seq, parts in self._sql(query, (session_id,)).fetchall():
                stored = json.loads(parts)
                new = next((n for o, n in pairs if o == stored), None)
                if new is not None:
                    sql = "UPDATE messages SET parts = ? WHERE session_id = ? AND seq = ?"
                    self._sql(sql, (new, session_id, seq))
                    done += 1
        return done

    def append_updates(self, session_id: str, updates: Iterable[Mapping[str, Any]]) -> None:
        """Add ``session/update`` payloads to the transcript."""
        self.append(session_id, updates=updates)

    @_sqlite_errors
    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The transcript to replay on ``session/load``, in order."""
        rows = self._sql(
            "SELECT payload FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [json.loads(payload) for (payload,) in rows]

    def copy(self, source: str, new_id: str, cwd: str) -> SessionRecord | None:
        """A new session ``new_id`` in ``cwd`` holding a copy of ``source`` (its fields,
        history, transcript and call ids) in one transaction; None when there is none.

        One transaction, so a failure or a killed process part way leaves no session
        with the source's title and no history: the copy is there whole or not at all.
        """
        now = self._clock()
        with self._transaction():
            cursor = self._sql(
                "INSERT INTO sessions (id, cwd, additional_dirs, created_at, updated_at,"
                " title, backend, mode, config) SELECT ?, ?, additional_dirs, ?, ?, title,"
                " backend, mode, config FROM sessions WHERE id = ?",
                (new_id, cwd, now, now, source),
            )
            if cursor.rowcount == 0:
                return None
            for table, columns in _COPIED:
                self._sql(
                    f"INSERT INTO {table} (session_id, {columns})"
                    f" SELECT ?, {columns} FROM {table} WHERE session_id = ?",
                    (new_id, source),
                )
        return self._require(new_id)

    def delete(self, session_id: str) -> bool:
        """Remove the session with its history and transcript; False when there was none."""
        with self._transaction():
            cursor = self._sql("DELETE FROM sessions WHERE id = ?", (session_id,))
        return cursor.rowcount > 0

    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self._db.close()

    def __enter__(self) -> SessionDatabase:
        return self

    def __exit__(
        self, exc: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock at once: the MAX(seq) read and the inserts that
        # follow it cannot interleave with another writer's.
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
                raise
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, self.busy_timeout) from exc

    def _sql(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """``execute`` with every text parameter made encodable (module doc)."""
        return self._db.execute(sql, _encodable(params))

    def _insert(
        self, table: str, columns: str, session_id: str, rows: list[tuple[Any, ...]]
    ) -> None:
        if not rows:
            return
        (last,) = self._sql(
            f"SELECT COALESCE(MAX(seq), -1) FROM {table} WHERE session_id = ?", (session_id,)
        ).fetchone()
        marks = ", ".join("?" * (len(rows[0]) + 2))
        self._db.executemany(
            f"INSERT INTO {table} (session_id, seq, {columns}) VALUES ({marks})",
            [_encodable((session_id, last + 1 + i, *row)) for i, row in enumerate(rows)],
        )

    def _add_call_ids(self, session_id: str, ids: Iterable[str]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO tool_call_ids (session_id, id) VALUES (?, ?)",
            [_encodable((session_id, i)) for i in ids],
        )

    def _touch(self, session_id: str) -> None:
        cursor = self._sql(
            "UPDATE sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?",
            (self._clock(), session_id),
        )
        if cursor.rowcount == 0:
            raise SessionNotFoundError(f"no session {session_id!r}")

    def _require(self, session_id: str) -> SessionRecord:
        record = self.get(session_id)
        if record is None:
            raise SessionNotFoundError(f"no session {session_id!r}")
        return record


_MESSAGE_COLUMNS = "role, backend, parts"
_COPIED = (  # what a copy takes besides the session row (table, its columns)
    ("messages", f"seq, {_MESSAGE_COLUMNS}"),
    ("transcript", "seq, ts, payload"),
    ("tool_call_ids", "id"),
    ("prompts", "number, first_line, ts, message_index, transcript_len, record"),
    ("rewind_undo", "state"),
)
_SELECT = (
    "SELECT id, cwd, additional_dirs, created_at, updated_at, title, backend, mode, config"
    " FROM sessions"
)


def _encodable(params: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(encodable(p) if isinstance(p, str) else p for p in params)


def _message_row(message: Message) -> tuple[str, str | None, str]:
    return (message.role, message.backend, dumps(message_to_dict(message)["parts"]))


def _record(row: tuple[Any, ...]) -> SessionRecord:
    sid, cwd, dirs, created, updated, title, backend, mode, config = row
    return SessionRecord(
        sid,
        cwd,
        tuple(json.loads(dirs)),
        created,
        updated,
        title,
        backend,
        one_of(MODES, mode),  # a mode this version does not know reads as None
        json.loads(config),
    )


__all__ = [
    "SCHEMA_VERSION",
    "SessionDatabase",
    "SessionNotFoundError",
    "SessionRecord",
    "StoreError",
    "default_db_path",
]

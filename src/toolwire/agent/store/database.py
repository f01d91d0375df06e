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

The connection, its transactions and its errors: ``connection``; the rows: ``records``.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolwire.agent.store.connection import (
    BUSY_TIMEOUT_S,
    Connection,
    encodable_row,
    sqlite_errors,
)
from toolwire.agent.store.records import SessionNotFoundError, SessionRecord, session_record
from toolwire.agent.store.schema import SCHEMA_VERSION, StoreError, default_db_path
from toolwire.config.choices import Mode
from toolwire.history import Message
from toolwire.history.jsonform import dumps, message_from_dict, message_to_dict

_UNSET: Any = object()


class SessionDatabase(Connection):
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
        self.clock = clock
        super().__init__(path, busy_timeout=busy_timeout)

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
        parent_id: str | None = None,
    ) -> SessionRecord:
        """A new session (``session_id`` defaults to a fresh UUID); ``parent_id``: the
        session a subagent belongs to."""
        sid = session_id or str(uuid.uuid4())
        now = self.clock()
        with self.transaction():
            self.sql(
                "INSERT INTO sessions (id, cwd, additional_dirs, created_at, updated_at,"
                " title, backend, mode, config, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, cwd, dumps(list(additional_dirs)), now, now, title, backend, mode,
                 dumps(dict(config or {})), parent_id),
            )  # fmt: skip
        return self._require(sid)

    @sqlite_errors
    def get(self, session_id: str) -> SessionRecord | None:
        """The session, or None when there is none with that id."""
        row = self.sql(f"{_SELECT} WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else session_record(row)

    @sqlite_errors
    def list_sessions(
        self, *, cwd: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[SessionRecord]:
        """Top-level sessions (no subagents), most recently updated first, optionally
        only those in ``cwd``."""
        where, params = ("WHERE parent_id IS NULL", [])
        if cwd is not None:
            where, params = (f"{where} AND cwd = ?", [cwd])
        sql = f"{_SELECT} {where} ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?"
        rows = self.sql(sql, (*params, -1 if limit is None else limit, offset))
        return [session_record(row) for row in rows]

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
        with self.transaction():
            self.touch(session_id)
            if config_values:
                base = self._require(session_id).config if config is _UNSET else config
                config = {**base, **config_values}
            if config is not _UNSET:
                columns["config"] = dumps(dict(config))
            for column, value in columns.items():  # column names come from the code above
                self.sql(f"UPDATE sessions SET {column} = ? WHERE id = ?", (value, session_id))
        return self._require(session_id)

    def set_config_value(self, session_id: str, key: str, value: Any) -> SessionRecord:
        """Set one config value, keeping the others."""
        return self.update(session_id, config_values={key: value})

    def add_call_ids(self, session_id: str, ids: Iterable[str]) -> None:
        """Record ``toolCallId``s the session issued (each is kept once)."""
        with self.transaction():
            self.touch(session_id)
            self._add_call_ids(session_id, ids)

    @sqlite_errors
    def call_ids(self, session_id: str) -> set[str]:
        """Every ``toolCallId`` the session issued, in any process."""
        rows = self.sql("SELECT id FROM tool_call_ids WHERE session_id = ?", (session_id,))
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
        now = self.clock()
        update_rows = [(now, dumps(dict(u))) for u in updates]
        with self.transaction():
            self.touch(session_id)
            self.insert("messages", _MESSAGE_COLUMNS, session_id, message_rows)
            self.insert("transcript", "ts, payload", session_id, update_rows)
            self._add_call_ids(session_id, call_ids)

    def append_messages(self, session_id: str, messages: Iterable[Message]) -> None:
        """Add messages at the end of the session's history."""
        self.append(session_id, messages=messages)

    @sqlite_errors
    def messages(self, session_id: str) -> list[Message]:
        """The session's history, in order."""
        rows = self.sql(
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
        with self.transaction():
            self.touch(session_id)
            self.sql("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self.insert("messages", _MESSAGE_COLUMNS, session_id, rows)

    def replace_parts(self, session_id: str, changes: Iterable[tuple[Message, Message]]) -> int:
        """Rewrite stored messages in place: a message whose parts are ``old``'s gets
        ``new``'s. Matched by content, not position (another window may have appended
        meanwhile, and its messages stay); how many were rewritten."""
        pairs = [(message_to_dict(old)["parts"], _message_row(new)[2]) for old, new in changes]
        done = 0
        with self.transaction():
            self.touch(session_id)
            query = "SELECT seq, parts FROM messages WHERE session_id = ? ORDER BY seq"
            for seq, parts in self.sql(query, (session_id,)).fetchall():
                stored = json.loads(parts)
                new = next((n for o, n in pairs if o == stored), None)
                if new is not None:
                    sql = "UPDATE messages SET parts = ? WHERE session_id = ? AND seq = ?"
                    self.sql(sql, (new, session_id, seq))
                    done += 1
        return done

    def append_updates(self, session_id: str, updates: Iterable[Mapping[str, Any]]) -> None:
        """Add ``session/update`` payloads to the transcript."""
        self.append(session_id, updates=updates)

    @sqlite_errors
    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The transcript to replay on ``session/load``, in order."""
        rows = self.sql(
            "SELECT payload FROM transcript WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [json.loads(payload) for (payload,) in rows]

    def copy(self, source: str, new_id: str, cwd: str) -> SessionRecord | None:
        """A new session ``new_id`` in ``cwd`` holding a copy of ``source`` (its fields,
        history, transcript and call ids) in one transaction; None when there is none.

        One transaction, so a failure or a killed process part way leaves no session
        with the source's title and no history: the copy is there whole or not at all.
        """
        now = self.clock()
        with self.transaction():
            cursor = self.sql(
                "INSERT INTO sessions (id, cwd, additional_dirs, created_at, updated_at,"
                " title, backend, mode, config) SELECT ?, ?, additional_dirs, ?, ?, title,"
                " backend, mode, config FROM sessions WHERE id = ?",
                (new_id, cwd, now, now, source),
            )
            if cursor.rowcount == 0:
                return None
            for table, columns in _COPIED:
                self.sql(
                    f"INSERT INTO {table} (session_id, {columns})"
                    f" SELECT ?, {columns} FROM {table} WHERE session_id = ?",
                    (new_id, source),
                )
        return self._require(new_id)

    @sqlite_errors
    def children(self, session_id: str) -> list[str]:
        """The ids of the subagents ``session_id`` started, oldest first."""
        rows = self.sql(
            "SELECT id FROM sessions WHERE parent_id = ? ORDER BY created_at, rowid", (session_id,)
        )
        return [row[0] for row in rows]

    def delete(self, session_id: str) -> bool:
        """Remove the session with its history and transcript; False when there was none."""
        with self.transaction():
            cursor = self.sql("DELETE FROM sessions WHERE id = ?", (session_id,))
        return cursor.rowcount > 0

    def _add_call_ids(self, session_id: str, ids: Iterable[str]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO tool_call_ids (session_id, id) VALUES (?, ?)",
            [encodable_row((session_id, i)) for i in ids],
        )

    def touch(self, session_id: str) -> None:
        """Mark the session updated now (``session/list`` orders by it)."""
        cursor = self.sql(
            "UPDATE sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?",
            (self.clock(), session_id),
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


def _message_row(message: Message) -> tuple[str, str | None, str]:
    return (message.role, message.backend, dumps(message_to_dict(message)["parts"]))


__all__ = [
    "SCHEMA_VERSION",
    "SessionDatabase",
    "SessionNotFoundError",
    "SessionRecord",
    "StoreError",
    "default_db_path",
]

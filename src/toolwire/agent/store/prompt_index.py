"""The prompt index of a session, and the conversation side of ``/rewind``, in the store.

One row per prompt that reached the model (a typed prompt, ``/init``, a custom command;
built-in commands are not numbered), numbered from 1 in the order received: its first
line and time, where it starts in the stored history (``message_index``) and in the
transcript (``transcript_len``), and the conversation record just before it. A rewind to
before prompt N cuts all three at N's row and puts N's record back, in one transaction;
what it cut (messages, transcript lines, index rows, the record it replaced) is kept as
the session's undo state, so ``/rewind undo`` (in any later process) puts it back.

The tables (``prompts``, ``rewind_undo``) come with schema version 3 (``store.schema``);
``SessionDatabase.copy`` copies them for a fork, and a delete removes them with the
session. These functions run on the store's thread, like every ``SessionDatabase`` call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from toolwire.agent.store.database import SessionDatabase
from toolwire.conversation import RECORD_KEY
from toolwire.history.jsonform import dumps

_COLUMNS = "number, first_line, ts, message_index, transcript_len, record"


@dataclass(frozen=True, slots=True)
class PromptRow:
    """One numbered prompt; ``record``: the conversation record (JSON) before it."""

    number: int
    first_line: str
    ts: float
    message_index: int
    transcript_len: int
    record: Mapping[str, Any]

    def row(self) -> tuple[Any, ...]:
        return (self.number, self.first_line, self.ts, self.message_index,
                self.transcript_len, dumps(dict(self.record)))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Undo:
    """What the last rewind cut, to put back: rows as stored, the record it replaced."""

    number: int
    message_index: int
    transcript_len: int
    messages: list[list[Any]]
    transcript: list[list[Any]]
    prompts: list[list[Any]]
    record: Mapping[str, Any]
    snapshot: str | None
    """The file snapshot taken before the rewind (None: the rewind did not touch files)."""


def add_prompt(
    db: SessionDatabase, session_id: str, first_line: str, record: Mapping[str, Any]
) -> PromptRow:
    """Number the next prompt, before its message and transcript line are stored."""
    with db.transaction():
        (last,) = db.sql(
            "SELECT COALESCE(MAX(number), 0) FROM prompts WHERE session_id = ?", (session_id,)
        ).fetchone()
        made = PromptRow(
            last + 1, first_line, db.clock(), _count(db, "messages", session_id),
            _count(db, "transcript", session_id), record,
        )  # fmt: skip
        db.sql(f"INSERT INTO prompts (session_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, *made.row()))  # fmt: skip
    return made


def prompts(db: SessionDatabase, session_id: str) -> list[PromptRow]:
    """The session's numbered prompts, in order."""
    rows = db.sql(
        f"SELECT {_COLUMNS} FROM prompts WHERE session_id = ? ORDER BY number", (session_id,)
    )
    return [PromptRow(n, line, ts, m, t, json.loads(r)) for n, line, ts, m, t, r in rows]


def cut(
    db: SessionDatabase,
    session_id: str,
    at: PromptRow | None,
    replaced: Mapping[str, Any],
    snapshot: str | None,
) -> None:
    """Cut history, transcript and index to before prompt ``at``, put its record back,
    and keep what was cut (with ``replaced``, the record now) as the undo state.

    ``at=None`` cuts nothing (a rewind of the files only): the undo state then holds the
    record now and the files' ``snapshot``."""
    with db.transaction():
        db.touch(session_id)
        if at is None:
            (last,) = db.sql(
                "SELECT COALESCE(MAX(number), 0) FROM prompts WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            at = PromptRow(
                last + 1, "", 0.0, _count(db, "messages", session_id),
                _count(db, "transcript", session_id), replaced,
            )  # fmt: skip
        undo = Undo(
            at.number, at.message_index, at.transcript_len,
            _take(db, "messages", "role, backend, parts", session_id, at.message_index),
            _take(db, "transcript", "ts, payload", session_id, at.transcript_len),
            _take_prompts(db, session_id, at.number), dict(replaced), snapshot,
        )  # fmt: skip
        _set_record(db, session_id, at.record)
        state = dumps(asdict(undo))
        db.sql("INSERT OR REPLACE INTO rewind_undo (session_id, state) VALUES (?, ?)",
                (session_id, state))  # fmt: skip


def pending_undo(db: SessionDatabase, session_id: str) -> Undo | None:
    """The undo state the last rewind left, if it was not undone yet."""
    row = db.sql("SELECT state FROM rewind_undo WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else Undo(**json.loads(row[0]))


def undo(db: SessionDatabase, session_id: str) -> Undo | None:
    """Put back what the last rewind cut; None when there is nothing to undo.

    The history and the index go back to what they were (prompts made since the rewind
    go); the transcript gets its cut lines back in place, and the lines written since
    (the rewind's own, and later prompts') follow them, so a replay shows what happened.
    """
    with db.transaction():
        found = pending_undo(db, session_id)
        if found is None:
            return None
        db.touch(session_id)
        _take(db, "messages", "seq", session_id, found.message_index)
        since = _take(db, "transcript", "ts, payload", session_id, found.transcript_len)
        _take_prompts(db, session_id, found.number)
        rows = [tuple(r) for r in found.messages]
        db.insert("messages", "role, backend, parts", session_id, rows)
        lines = [tuple(r) for r in (*found.transcript, *since)]
        db.insert("transcript", "ts, payload", session_id, lines)
        for row in found.prompts:
            db.sql(f"INSERT INTO prompts (session_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_id, *row))  # fmt: skip
        _set_record(db, session_id, found.record)
        db.sql("DELETE FROM rewind_undo WHERE session_id = ?", (session_id,))
    return found


def _count(db: SessionDatabase, table: str, session_id: str) -> int:
    # Rows are numbered from 0 without gaps (appends, copies and cuts keep it so).
    (count,) = db.sql(
        f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(count)


def _take(
    db: SessionDatabase, table: str, columns: str, session_id: str, start: int
) -> list[list[Any]]:
    """Remove the rows from ``start`` on; their ``columns``, in order."""
    where = "WHERE session_id = ? AND seq >= ?"
    rows = db.sql(f"SELECT {columns} FROM {table} {where} ORDER BY seq", (session_id, start))
    taken = [list(r) for r in rows]
    db.sql(f"DELETE FROM {table} {where}", (session_id, start))
    return taken


def _take_prompts(db: SessionDatabase, session_id: str, number: int) -> list[list[Any]]:
    where = "WHERE session_id = ? AND number >= ?"
    rows = db.sql(f"SELECT {_COLUMNS} FROM prompts {where} ORDER BY number", (session_id, number))
    taken = [list(r) for r in rows]
    db.sql(f"DELETE FROM prompts {where}", (session_id, number))
    return taken


def _set_record(db: SessionDatabase, session_id: str, record: Mapping[str, Any]) -> None:
    """The conversation record in the session's config values, the other values kept."""
    (config,) = db.sql("SELECT config FROM sessions WHERE id = ?", (session_id,)).fetchone()
    values = {**json.loads(config), RECORD_KEY: dict(record)}
    db.sql("UPDATE sessions SET config = ? WHERE id = ?", (dumps(values), session_id))


def first_line(text: str, limit: int = 80) -> str:
    """A prompt's first non-blank line, cut to ``limit`` characters."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


__all__ = [
    "PromptRow",
    "Undo",
    "add_prompt",
    "cut",
    "first_line",
    "pending_undo",
    "prompts",
    "undo",
]

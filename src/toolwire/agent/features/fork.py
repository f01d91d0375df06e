"""``session/fork`` and ``session/delete`` on the stored sessions.

A fork is a new stored session holding a copy of the source's history, transcript,
issued call ids, title, backend, mode and config values (the thinking level, the
active backend, a stored compaction: its indices still fit, the history being the
same). What a running turn has not saved yet is not in the fork. The source is not
changed. A delete removes the stored session with its history and transcript
(``SessionDatabase.delete``); the caller stops a live one first.
"""

from __future__ import annotations

from toolwire.agent.store.database import SessionDatabase, SessionRecord


def copy_session(db: SessionDatabase, source: str, new_id: str, cwd: str) -> SessionRecord | None:
    """Copy stored session ``source`` as ``new_id`` in ``cwd``; None when there is none.

    One transaction (``SessionDatabase.copy``): a fork is stored whole or not at all.
    """
    return db.copy(source, new_id, cwd)


__all__ = ["copy_session"]

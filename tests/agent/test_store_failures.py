"""The session database's failures, as a user meets them: one line that says what happened.

A lock another process holds past the busy timeout and a full disk each give a
``StoreError`` naming the file and the cause (never SQLite's "cannot rollback - no
transaction is active", which hid the real error when SQLite had already rolled back
on its own). A write killed half-way leaves no stray files once the database is used
again, and what it did not commit is not there.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolwire.agent.store.database import SessionDatabase, StoreError
from toolwire.history import user


def _one_line(exc: pytest.ExceptionInfo[StoreError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    assert "cannot rollback" not in message
    return message


def test_a_lock_held_by_another_process_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionDatabase(path, busy_timeout=0.05) as db:
        sid = db.create("/p").id
        other = sqlite3.connect(path, isolation_level=None)  # another window's agent
        other.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreError) as raised:
                db.append_messages(sid, [user("hello")])
            message = _one_line(raised)
            assert "locked by another process" in message
            assert str(path) in message
            assert db.messages(sid) == []  # WAL: reading goes on meanwhile
        finally:
            other.execute("ROLLBACK")
            other.close()
        db.append_messages(sid, [user("hello")])  # the lock is gone: writes work again
        assert [m.text() for m in db.messages(sid)] == ["hello"]


def test_a_full_disk_is_one_clear_line_and_the_store_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionDatabase(path) as db:
        sid = db.create("/p").id
        db.append_messages(sid, [user("kept")])
        # SQLITE_FULL without filling a disk: the file may not grow past its pages.
        (pages,) = db._db.execute("PRAGMA page_count").fetchone()
        db._db.execute(f"PRAGMA max_page_count = {pages + 1}")
        with pytest.raises(StoreError) as raised:
            db.append(sid, messages=[user("x" * 100_000)], updates=[{"sessionUpdate": "y"}])
        message = _one_line(raised)
        assert "is full" in message
        assert str(path) in message
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
        assert [m.text() for m in db.messages(sid)] == ["kept"]  # all or nothing
        assert db.updates(sid) == []
        db.update(sid, title="still usable")
        assert db.get(sid) is not None


_KILLED_WRITER = """
import os, signal, sys
from toolwire.agent.store.database import SessionDatabase
from toolwire.history import user

db = SessionDatabase(sys.argv[1])
sid = db.create("/p", session_id="s").id
db.append_messages(sid, [user("committed")])
db._db.execute("BEGIN IMMEDIATE")
for seq in range(1, 200):
    db._db.execute(
        "INSERT INTO messages (session_id, seq, role, parts) VALUES (?, ?, 'user', ?)",
        (sid, seq, '[{"type":"text","text":"' + "x" * 10000 + '"}]'),
    )
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_write_killed_half_way_leaves_no_files_and_no_half_turn(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    script = textwrap.dedent(_KILLED_WRITER)
    killed = subprocess.run([sys.executable, "-c", script, str(path)], check=False, timeout=30)
    assert killed.returncode == -9
    assert (tmp_path / "sessions.db-wal").exists()  # what the killed write left
    with SessionDatabase(path) as db:
        assert [m.text() for m in db.messages("s")] == ["committed"]
        db.append_messages("s", [user("after")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]
    with SessionDatabase(path) as db:
        assert [m.text() for m in db.messages("s")] == ["committed", "after"]

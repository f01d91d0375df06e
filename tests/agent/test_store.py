"""The SQLite session store: sessions, lossless history, transcript, order, migrations."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.agent.protocol.ids import IdGuard
from toolwire.agent.store.database import SessionDatabase, SessionNotFoundError, default_db_path
from toolwire.agent.store.schema import MIGRATIONS, SCHEMA_VERSION, SchemaVersionError, migrate
from toolwire.agent.store.worker import StoreWorker
from toolwire.events import ToolCallEnd, ToolCallStart
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    tool_results,
    user,
)
from toolwire.history.jsonform import message_from_dict, message_to_dict

HISTORY = [
    user("Fix the tests, please. ✓ 日本語 \ud83d"),  # a lone surrogate a model once produced
    Message(
        "assistant",
        (
            ThinkingPart("Let me look.", signature="EqQBsig=="),
            ThinkingPart("", redacted="opaque-redacted-payload"),
            TextPart("Reading the test first."),
            ToolCallPart("toolu_1", "Read", {"file_path": "t.py", "limit": 10}),
            ToolCallPart("call_2", "Bash", {}, signature="gemini-thought-sig"),
            ToolCallPart("call_3", "Weird", [1, 2.5, None, True, {"nested": ["x"]}]),
        ),
        backend="claude-sonnet",
    ),
    tool_results(
        [
            ToolResultPart("toolu_1", "Read", "     1\tassert False\n"),
            ToolResultPart("call_2", "Bash", "boom\n\n[Exit code 1]", is_error=True),
            ToolResultPart("call_3", "Weird", ""),
        ]
    ),
    Message("assistant", (TextPart("Done."),), backend="glm"),
]

# Few distinct ids, some shaped like the ones the guard makes, so collisions are common.
_PROVIDER_IDS = st.sampled_from(["call_0", "call_1", "call_0-2", "call_0-2-2", "toolu_a", "x-3"])


def clock() -> Callable[[], float]:
    """A clock that ticks 10 s per reading, so order never depends on timer resolution."""
    ticks = itertools.count(1_700_000_000, 10)
    return lambda: float(next(ticks))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionDatabase]:
    db = SessionDatabase(tmp_path / "data" / "sessions.db", clock=clock())
    yield db
    db.close()


def test_message_json_round_trip_is_lossless() -> None:
    for message in HISTORY:
        assert message_from_dict(message_to_dict(message)) == message
    assert "backend" not in message_to_dict(HISTORY[0])
    assert message_to_dict(HISTORY[1])["parts"][0] == {
        "type": "thinking",
        "text": "Let me look.",
        "signature": "EqQBsig==",
    }


def test_history_round_trip_through_the_database(store: SessionDatabase) -> None:
    session = store.create("/work/p")
    store.append_messages(session.id, HISTORY[:2])
    store.append_messages(session.id, HISTORY[2:])
    assert store.messages(session.id) == HISTORY


def test_create_get_and_fields(store: SessionDatabase) -> None:
    session = store.create(
        "/work/p", ["/work/lib"], title="Fix tests", backend="claude", mode="ask",
        config={"model": "claude", "thinking": True},
    )  # fmt: skip
    assert store.get(session.id) == session
    assert session.additional_dirs == ("/work/lib",)
    assert session.config == {"model": "claude", "thinking": True}
    assert session.created_at == session.updated_at == 1_700_000_000
    assert session.updated_at_iso == "2023-11-14T22:13:20.000Z"
    assert store.get("missing") is None


def test_update_sets_only_given_fields_and_moves_updated_at(store: SessionDatabase) -> None:
    session = store.create("/p", title="Old", backend="claude", mode="ask")
    updated = store.update(session.id, title=None, mode="read-only")
    assert (updated.title, updated.backend, updated.mode) == (None, "claude", "read-only")
    assert updated.updated_at > session.updated_at
    again = store.set_config_value(session.id, "model", "glm-4.6")
    again = store.set_config_value(session.id, "effort", "high")
    assert again.config == {"model": "glm-4.6", "effort": "high"}


def test_list_is_most_recent_first_with_cwd_filter(store: SessionDatabase) -> None:
    a = store.create("/p1")
    b = store.create("/p2")
    c = store.create("/p1")
    assert [s.id for s in store.list_sessions()] == [c.id, b.id, a.id]
    store.append_messages(a.id, [user("again")])  # activity moves a session up
    assert [s.id for s in store.list_sessions()] == [a.id, c.id, b.id]
    assert [s.id for s in store.list_sessions(cwd="/p1")] == [a.id, c.id]
    assert [s.id for s in store.list_sessions(limit=1, offset=1)] == [c.id]


def test_transcript_keeps_updates_in_order(store: SessionDatabase) -> None:
    session = store.create("/p")
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}},
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "toolu_1",
            "title": "Edit m.py",
            "kind": "edit",
            "status": "completed",
            "content": [{"type": "diff", "path": "/p/m.py", "oldText": "a", "newText": "b"}],
        },
    ]
    store.append_updates(session.id, updates[:1])
    store.append_updates(session.id, updates[1:])
    assert store.updates(session.id) == updates


def test_append_records_history_and_transcript_together(store: SessionDatabase) -> None:
    session = store.create("/p")
    plan = {"sessionUpdate": "plan", "entries": []}
    store.append(session.id, messages=HISTORY[:1], updates=[plan])
    assert store.messages(session.id) == HISTORY[:1]
    assert store.updates(session.id) == [plan]
    with pytest.raises(SessionNotFoundError):
        store.append("nope", messages=HISTORY[:1], updates=[plan])
    assert store.messages("nope") == []
    assert store.updates("nope") == []


def test_unknown_session_is_refused(store: SessionDatabase) -> None:
    with pytest.raises(SessionNotFoundError):
        store.append_messages("nope", [user("x")])
    with pytest.raises(SessionNotFoundError):
        store.replace_messages("nope", [user("x")])
    with pytest.raises(SessionNotFoundError):
        store.update("nope", title="x")
    assert store.messages("nope") == []


def test_replace_messages_and_delete(store: SessionDatabase) -> None:
    session = store.create("/p")
    store.append_messages(session.id, HISTORY)
    store.append_updates(session.id, [{"sessionUpdate": "plan", "entries": []}])
    store.replace_messages(session.id, [user("summary")])
    assert store.messages(session.id) == [user("summary")]
    store.append_messages(session.id, [user("next")])
    assert store.messages(session.id) == [user("summary"), user("next")]
    assert store.delete(session.id) is True
    assert store.delete(session.id) is False
    assert store.get(session.id) is None
    assert store.messages(session.id) == []
    assert store.updates(session.id) == []


def test_reopen_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionDatabase(path) as first:
        session = first.create("/p", title="Kept")
        first.append_messages(session.id, HISTORY)
        reloaded = first.get(session.id)
    with SessionDatabase(path) as second:
        assert second.get(session.id) == reloaded
        assert second.messages(session.id) == HISTORY
        assert second.schema_version == SCHEMA_VERSION
        journal = second._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert journal == "wal"
    assert path.stat().st_mode & 0o777 == 0o600


def test_fresh_database_is_migrated_once(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    try:
        assert migrate(db) == 0
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert migrate(db) == SCHEMA_VERSION  # already current: nothing runs again
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert {"sessions", "messages", "transcript"} <= tables
    finally:
        db.close()


def test_migrations_run_in_order_from_an_older_version(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    try:
        steps = ("CREATE TABLE a (x)", "CREATE TABLE b (y); INSERT INTO a VALUES (1)")
        assert migrate(db, steps[:1]) == 0
        assert migrate(db, steps) == 1
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert db.execute("SELECT x FROM a").fetchall() == [(1,)]
    finally:
        db.close()


def test_failed_migration_leaves_the_old_version(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError):
            migrate(db, ("CREATE TABLE a (x); CREATE TABLE a (x)",))
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == []
    finally:
        db.close()


def test_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(SchemaVersionError, match="newer than this toolwire"):
        SessionDatabase(path)


def test_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "toolwire" / "sessions.db"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "toolwire" / "sessions.db"


@pytest.mark.anyio
async def test_the_store_worker_keeps_one_thread_and_the_order_even_for_cancelled_callers(
    tmp_path: Path,
) -> None:
    worker = StoreWorker(tmp_path / "sessions.db")
    threads: set[int] = set()
    release = threading.Event()

    def first(db: SessionDatabase) -> None:
        threads.add(threading.get_ident())
        db.create("/p", session_id="s1")
        release.wait(5)

    def second(db: SessionDatabase) -> None:
        threads.add(threading.get_ident())
        db.update("s1", title="landed")

    busy = asyncio.create_task(worker.call(first))
    queued = asyncio.create_task(worker.call(second))
    await asyncio.sleep(0.05)
    queued.cancel()  # its caller gives up while the job still waits its turn
    release.set()
    await busy
    with pytest.raises(asyncio.CancelledError):
        await queued
    record = await worker.call(lambda db: db.get("s1"))
    assert record is not None
    assert record.title == "landed"
    assert len(threads) == 1
    assert threading.get_ident() not in threads
    await worker.aclose()


def test_issued_call_ids_are_kept_per_session_and_go_with_it(store: SessionDatabase) -> None:
    one, two = store.create("/p"), store.create("/p")
    store.add_call_ids(one.id, ["call_0", "call_0-2"])
    store.add_call_ids(one.id, ["call_0"])  # kept once
    store.add_call_ids(two.id, ["call_0"])
    assert store.call_ids(one.id) == {"call_0", "call_0-2"}
    assert store.call_ids(two.id) == {"call_0"}
    with pytest.raises(SessionNotFoundError):
        store.add_call_ids("nope", ["x"])
    store.delete(one.id)
    assert store.call_ids(one.id) == set()


def test_config_values_merge_in_one_write(store: SessionDatabase) -> None:
    session = store.create("/p", backend="a", config={"keep": 1, "active_backend": "a"})
    record = store.update(session.id, backend="b", config_values={"active_backend": "b"})
    assert (record.backend, dict(record.config)) == ("b", {"keep": 1, "active_backend": "b"})
    record = store.set_config_value(session.id, "handoff_switch_at", 3)
    assert dict(record.config) == {"keep": 1, "active_backend": "b", "handoff_switch_at": 3}


def test_a_version_1_database_gets_the_call_ids_its_transcripts_show(tmp_path: Path) -> None:
    """Sessions stored before ids were kept: their transcripts' toolCallIds count as issued."""
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, MIGRATIONS[:1])
    db.execute(
        "INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES ('s', '/p', 1, 1), "
        "('t', '/p', 1, 1)"
    )
    payloads = [
        ("s", {"sessionUpdate": "tool_call", "toolCallId": "call_0", "title": "Read"}),
        ("s", {"sessionUpdate": "tool_call", "toolCallId": "call_0-2", "title": "Read"}),
        ("s", {"sessionUpdate": "tool_call_update", "toolCallId": "call_0", "status": "failed"}),
        ("s", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}),
        ("t", {"sessionUpdate": "tool_call", "toolCallId": "toolu_1", "title": "Bash"}),
    ]
    for seq, (sid, payload) in enumerate(payloads):
        db.execute(
            "INSERT INTO transcript (session_id, seq, ts, payload) VALUES (?, ?, 1, ?)",
            (sid, seq, json.dumps(payload)),
        )
    db.execute("INSERT INTO transcript VALUES ('t', 99, 1, 'not json')")  # survives
    db.close()
    with SessionDatabase(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.call_ids("s") == {"call_0", "call_0-2"}
        assert store.call_ids("t") == {"toolu_1"}
        assert len(store.updates("s")) == 4  # the transcript itself is untouched


@settings(max_examples=60)
@given(
    processes=st.lists(
        st.lists(st.lists(_PROVIDER_IDS, unique=True, max_size=4), max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_call_ids_stay_unique_over_any_restarts(processes: list[list[list[str]]]) -> None:
    """Whatever ids providers repeat, and wherever the agent restarts, none is issued twice.

    Each process seeds its guard from the store as ``SessionFactory.reopen`` does and
    records each id as it is issued, as the turn does.
    """
    issued: list[str] = []
    with SessionDatabase(":memory:") as store:
        sid = store.create("/p").id
        for responses in processes:
            used = store.call_ids(sid)
            for provider_ids in responses:
                guard = IdGuard(used)
                for index, provider_id in enumerate(provider_ids):
                    start = guard.event(ToolCallStart(provider_id, "Read", index))
                    assert isinstance(start, ToolCallStart)
                    store.add_call_ids(sid, [start.id])
                    issued.append(start.id)
                    end = guard.event(ToolCallEnd(provider_id, {}))
                    assert isinstance(end, ToolCallEnd)
                    assert end.id == start.id
    assert len(set(issued)) == len(issued)


def test_image_messages_round_trip_and_old_results_still_load(store: SessionDatabase) -> None:
    image = ImagePart("image/png", "iVBORw0KGgo=")
    history = [
        Message("user", (TextPart("what is this?"), image, ImagePart("", url="https://x.test/a"))),
        Message("assistant", (ToolCallPart("c1", "Read", {"file_path": "a.png"}),), backend="b"),
        tool_results([ToolResultPart("c1", "Read", "attached", images=(image,))]),
    ]
    session = store.create("/work/p")
    store.append_messages(session.id, history)
    assert store.messages(session.id) == history
    assert message_to_dict(history[0])["parts"][1] == {
        "type": "image",
        "media_type": "image/png",
        "data": "iVBORw0KGgo=",
    }
    old = {
        "role": "tool",
        "parts": [{"type": "tool_result", "call_id": "c", "name": "Read", "content": "x"}],
    }
    assert message_from_dict(old).parts == (ToolResultPart("c", "Read", "x"),)
    assert "images" not in message_to_dict(message_from_dict(old))["parts"][0]


def test_a_stored_mode_this_version_does_not_know_reads_as_none() -> None:
    # A store written by another version (or edited by hand) may hold any text.
    with SessionDatabase(":memory:") as db:
        sid = db.create("/p", [], mode="plan").id
        db.update(sid, mode=cast(Any, "turbo"))
        stored = db.get(sid)
        assert stored is not None
        assert stored.mode is None
        assert db.update(sid, mode="plan").mode == "plan"

"""The update engine: minimal fields, validation, profiles, throttling, ordering."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.acp_check import check, replay, validating
from toolwire.config.choices import Profile
from toolwire.errors import LifecycleError
from toolwire.events import (
    MessageEnd,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.lifecycle import CANCELLED_OUTPUT, ToolCallLifecycle
from toolwire.updates.metrics import Counters
from toolwire.updates.profiles import profile_for_client
from toolwire.updates.render import CallRecord, Envelope, UpdateBuilder
from toolwire.updates.translate import ResponseTranslator
from toolwire.updates.wire import (
    ToolCallState,
    location,
    session_notification,
    state_to_wire,
    text_content,
)


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


def _engine(profile: Profile = "minimal", interval: float = 0.05) -> UpdateEngine:
    return UpdateEngine("sess_1", profile=profile, interval=interval, clock=lambda: 0.0)


def _state(**kw: object) -> ToolCallState:
    base = ToolCallState("call_1", "Read a.py", "read", locations=[location("/p/a.py")])
    return base.replace(**kw)


def test_tool_call_then_only_changed_fields() -> None:
    engine = _engine()
    s0 = _state()
    (start,) = check(engine.start(s0, now=0.0))
    assert start.update == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1",
        "title": "Read a.py",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": "/p/a.py"}],
    }
    (run,) = check(engine.update(s0.replace(status="in_progress"), now=0.0))
    assert run.update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "in_progress",
    }
    (progress,) = check(
        engine.update(s0.replace(status="in_progress", content=[text_content("50%")]), now=1.0)
    )
    assert set(progress.update) == {"sessionUpdate", "toolCallId", "content"}


def test_nothing_changed_means_nothing_sent() -> None:
    engine = _engine(interval=0.0)
    s0 = _state(raw_input={"file_path": "a.py"})
    engine.start(s0, now=0.0)
    copy = json.loads(json.dumps(state_to_wire(s0)))
    rebuilt = ToolCallState(
        "call_1",
        copy["title"],
        copy["kind"],
        copy["status"],
        copy["locations"] and (),
        copy["locations"],
    ).replace(raw_input=copy["rawInput"])
    assert engine.update(s0, now=1.0) == []
    assert engine.update(rebuilt, now=2.0) == []
    assert engine.flush(now=3.0) == []


@pytest.mark.parametrize(
    ("profile", "keys"),
    [
        ("minimal", {"status"}),
        ("verbose", {"status", "title", "kind"}),
        ("full", {"status", "title", "kind", "content", "locations", "rawInput"}),
    ],
)
def test_profiles(profile: Profile, keys: set[str]) -> None:
    engine = _engine(profile)
    s0 = _state(raw_input={"file_path": "a.py"})
    engine.start(s0, now=0.0)
    (note,) = check(engine.update(s0.replace(status="in_progress"), now=0.0))
    assert set(note.update) - {"sessionUpdate", "toolCallId"} == keys


def test_profile_defaults_per_client() -> None:
    assert profile_for_client({"name": "zed", "version": "0.2"}) == "minimal"
    assert profile_for_client({"name": "AionUi"}) == "full"
    assert profile_for_client("Some Editor") == "minimal"
    assert profile_for_client(None) == "minimal"
    assert profile_for_client({"name": "zed"}, configured="verbose") == "verbose"
    with pytest.raises(ValueError, match="unknown profile"):
        profile_for_client(None, configured="chatty")


def test_validation_before_anything_is_written() -> None:
    engine = _engine()
    with pytest.raises(LifecycleError, match="before its tool_call"):
        engine.update(_state(status="in_progress"), now=0.0)
    with pytest.raises(LifecycleError, match="before its tool_call"):
        engine.permission("call_1")
    engine.start(_state(), now=0.0)
    with pytest.raises(LifecycleError, match="already sent"):
        engine.start(_state(), now=0.0)
    engine.update(_state(status="in_progress"), now=0.0)
    with pytest.raises(LifecycleError, match="goes back"):
        engine.update(_state(status="pending"), now=1.0)
    engine.update(_state(status="in_progress", raw_output={"n": 1}), now=2.0)
    with pytest.raises(LifecycleError, match="cannot be cleared"):
        engine.update(_state(status="in_progress", content=[text_content("x")]), now=3.0)
    engine.update(_state(status="completed", raw_output={"n": 1}), now=4.0)
    with pytest.raises(LifecycleError, match="after its end"):
        engine.update(_state(status="completed", raw_output={"n": 2}), now=5.0)
    with pytest.raises(LifecycleError, match="after its end"):
        engine.permission("call_1")


def test_builder_expresses_changed_fields() -> None:
    engine = _engine()
    engine.start(_state(), now=0.0)
    record = CallRecord(engine.client_state("call_1"), Counters())
    running = record.sent.replace(status="in_progress", content=(text_content("hi"),))
    builder = UpdateBuilder(record, Envelope("sess_1"), "minimal")
    note = builder.from_state(running, ["status", "content"]).build()
    check([note])
    assert note.update == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "in_progress",
        "content": [text_content("hi")],
    }
    back = UpdateBuilder(record, Envelope("sess_1"), "minimal")
    back.from_state(record.sent.replace(status="pending"), ["status"])
    with pytest.raises(LifecycleError, match="goes back"):
        back.build()
    assert record.sent.status == "in_progress", "a rejected update changes nothing"


def test_every_notification_has_the_one_envelope() -> None:
    """Engine updates, plans and updates built whole (modes, config) share one shape."""
    mode = {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}
    note = Envelope("sess_1").notify(mode)
    check([note])
    assert json.loads(note.line) == session_notification("sess_1", mode) == note.message
    engine = _engine()
    (plan,) = check(engine.plan([{"content": "x", "priority": "low", "status": "pending"}]))
    assert (
        json.loads(plan.line)["params"]
        == plan.params
        == {
            "sessionId": "sess_1",
            "update": {
                "sessionUpdate": "plan",
                "entries": [{"content": "x", "priority": "low", "status": "pending"}],
            },
        }
    )


def test_throttle_leading_edge_then_held_until_the_interval_ends() -> None:
    engine = _engine(interval=0.5)
    s = _state(status="pending")
    engine.start(s, now=0.0)
    running = s.replace(status="in_progress")
    assert len(engine.update(running, now=0.25)) == 1, "a status change goes out at once"
    frames = [running.replace(content=[text_content(f"{i}%")]) for i in range(10)]
    assert engine.update(frames[0], now=0.5) == []
    assert engine.next_deadline() == 0.75
    for i, frame in enumerate(frames[1:], 1):
        assert engine.update(frame, now=0.5 + i / 64) == []
    assert engine.poll(now=0.625) == []
    (merged,) = check(engine.poll(now=0.75))
    assert merged.update["content"] == [text_content("9%")], "latest value wins"
    assert engine.next_deadline() is None
    (leading,) = engine.update(running.replace(content=[text_content("done")]), now=2.0)
    assert leading.update["content"] == [text_content("done")]


def test_status_change_and_end_flush_at_once_with_pending_fields() -> None:
    engine = _engine(interval=10.0)
    s = _state(status="in_progress")
    engine.start(_state(), now=0.0)
    engine.update(s, now=0.0)
    assert engine.update(s.replace(content=[text_content("1")]), now=0.1) == []
    done = s.replace(status="completed", content=[text_content("all")], raw_output={"ok": True})
    (end,) = check(engine.update(done, now=0.2))
    assert end.update["status"] == "completed"
    assert end.update["content"] == [text_content("all")]
    assert engine.next_deadline() is None


def test_text_after_a_held_update_flushes_it_first() -> None:
    engine = _engine(interval=10.0)
    s = _state(status="in_progress")
    engine.start(_state(), now=0.0)
    engine.update(s, now=0.0)
    assert engine.update(s.replace(content=[text_content("frame")]), now=0.1) == []
    notes = check(engine.text("and then", now=0.2))
    assert [n.kind for n in notes] == ["tool_call_update", "agent_message_chunk"]


def test_several_calls_in_one_pass_and_flush_at_the_end() -> None:
    engine = _engine(interval=10.0)
    a, b = _state(), ToolCallState("call_2", "Bash", "execute")
    notes = engine.start(a, now=0.0) + engine.start(b, now=0.0)
    notes += check(
        engine.update(a.replace(status="in_progress"), b.replace(status="in_progress"), now=0.0)
    )
    assert [n.tool_call_id for n in notes[2:]] == ["call_1", "call_2"]
    held = engine.update(
        a.replace(status="in_progress", content=[text_content("b")]),
        b.replace(status="in_progress", content=[text_content("ls")]),
        now=1.0,
    )
    assert held == []
    flushed = check(engine.flush(now=1.0))
    assert [(n.tool_call_id, n.update.get("content")) for n in flushed] == [
        ("call_1", [text_content("b")]),
        ("call_2", [text_content("ls")]),
    ]
    final = replay(notes + flushed)
    assert final["call_1"]["content"] == [text_content("b")]


def test_permission_flushes_the_call_and_carries_no_content() -> None:
    engine = _engine(interval=10.0)
    s = _state(status="pending", raw_input={"file_path": "a.py"})
    engine.start(s, now=0.0)
    engine.update(s.replace(content=[text_content("diff")]), now=0.0)
    engine.update(s.replace(content=[text_content("diff 2")]), now=0.1)
    flushed, payload = engine.permission("call_1", now=0.2)
    assert [n.update.get("content") for n in check(flushed)] == [[text_content("diff 2")]]
    named = {
        "toolCallId": "call_1",
        "title": "Read a.py",
        "kind": "read",
        "locations": [{"path": "/p/a.py"}],
        "rawInput": {"file_path": "a.py"},
    }
    assert payload == named  # named, so a client's policy can match it; no content
    verbose = _engine("verbose")
    verbose.start(s, now=0.0)
    assert verbose.permission("call_1", now=0.0)[1] == named


def test_metrics_count_bytes_and_naive_bytes() -> None:
    engine = _engine("minimal", interval=0.0)
    full = _engine("full", interval=0.0)
    s = _state(raw_input={"file_path": "a.py", "x": "y" * 500})
    states = [s.replace(status="in_progress", content=[text_content(f"{i}")]) for i in range(5)]
    sent_minimal = check(engine.start(s, now=0.0))
    sent_full = check(full.start(s, now=0.0))
    for i, st in enumerate(states):
        sent_minimal += check(engine.update(st, now=float(i)))
        sent_full += check(full.update(st, now=float(i)))
    m, f = engine.metrics(), full.metrics()
    assert m.total.bytes_sent == sum(len(n.line) for n in sent_minimal)
    assert f.total.bytes_sent == sum(len(n.line) for n in sent_full)
    assert m.total.naive_bytes == f.total.bytes_sent, "naive = every field on every update"
    assert f.total.naive_bytes == f.total.bytes_sent
    assert m.total.saved_ratio > 0.6
    assert m.calls["call_1"].notifications == 6
    assert m.total.changes == 6
    assert m.total.detect_ns > 0
    assert "call_1" in m.table()
    assert m.to_dict()["session"]["notifications"] == 6


def test_the_schema_check_rejects_what_the_root_schema_would_let_through() -> None:
    envelope = Envelope("sess_1")
    with pytest.raises(AssertionError, match="schema"):
        envelope.wrap(
            {"sessionUpdate": "tool_call", "toolCallId": "x"}, ',"toolCallId":"x"', "tool_call", "x"
        )
    bad_status = {"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "cancelled"}
    with pytest.raises(AssertionError, match="schema"):
        envelope.wrap(bad_status, ',"toolCallId":"x","status":"cancelled"', "tool_call_update", "x")


def test_cancel_ends_every_open_call_and_nothing_is_lost() -> None:
    engine = _engine(interval=10.0)
    turn = ResponseTranslator(engine, cwd="/p")
    notes = turn.feed_all(
        [
            TextDelta("Let me look."),
            ToolCallStart("c1", "Bash", 0),
            ToolCallDelta("c1", '{"command": "ls"}', ("command",), ("ls",)),
            ToolCallEnd("c1", {"command": "ls"}),
            ToolCallStart("c2", "Read", 1),
            ToolCallDelta("c2", '{"file_path": "a.py"}', ("file_path",), ("a.py",)),
            ToolCallEnd("c2", {"file_path": "a.py"}),
        ],
        now=0.0,
    )
    assert engine.next_deadline() is not None, "c2's rawInput is held"
    assert replay(notes)["c2"]["title"] == "Read a.py", "a title refinement is never held"
    notes += turn.cancel(now=0.5)
    assert engine.next_deadline() is None
    calls = replay(notes)
    for call_id in ("c1", "c2"):
        assert calls[call_id]["status"] == "failed"
        assert calls[call_id]["rawOutput"] == CANCELLED_OUTPUT
    assert calls["c2"]["title"] == "Read a.py"
    assert calls["c2"]["rawInput"] == {"file_path": "a.py"}, "the held rawInput was not lost"
    assert calls["c1"]["rawInput"] == {"command": "ls"}
    assert turn.cancel(now=1.0) == [], "cancelling twice sends nothing"


def test_a_stream_error_flushes_and_the_message_ends() -> None:
    engine = _engine(interval=10.0)
    turn = ResponseTranslator(engine, cwd="/p")
    notes = turn.feed_all(
        [
            TextDelta("a"),
            ToolCallStart("c1", "Read", 0),
            ToolCallDelta("c1", '{"file_path": "a.py"', ("file_path",), ("a.py",)),
        ],
        now=0.0,
    )
    notes += turn.feed(StreamError("overloaded"), now=0.1)
    assert [n.kind for n in notes][-1] == "tool_call_update"
    assert turn.errors == ["overloaded"]
    notes += turn.feed_all([ToolCallEnd("c1", error="stream cut"), MessageEnd("error")], now=0.2)
    assert replay(notes)["c1"]["status"] == "failed"
    assert turn.stop_reason == "error"
    later = turn.feed(TextDelta("b"), now=0.3)
    assert later[0].update["messageId"] != notes[0].update["messageId"]
    with pytest.raises(LifecycleError, match="before its start"):
        turn.feed(ToolCallDelta("nope", "{"))


def test_a_rejected_tool_call_loses_nothing_held() -> None:
    engine = _engine(interval=10.0)
    s = _state(status="in_progress")
    engine.start(_state(), now=0.0)
    engine.update(s, now=0.0)
    assert engine.update(s.replace(content=[text_content("b")]), now=1.0) == []
    with pytest.raises(LifecycleError, match="already sent"):
        engine.start(_state(), now=2.0)
    (held,) = engine.flush(now=3.0)
    assert held.update["content"] == [text_content("b")]


def test_a_tool_reported_location_reaches_the_editor_in_the_final_update() -> None:
    """``Edit`` knows the line it changed; the end of its call carries it (schema-valid)."""
    engine = _engine()
    call = ToolCallLifecycle("call_1", "Edit", cwd="/p")
    call.end_arguments(ToolCallEnd("call_1", {"file_path": "a.py", "old_string": "x"}))
    notes = engine.start(call, now=0.0)
    call.run()
    notes += engine.update(call, now=1.0)
    changed = [location("/p/a.py", 12)]
    call.complete("Edited a.py.", locations=changed)
    notes += engine.update(call, now=2.0)
    final = check(notes)[-1]
    assert final.update["status"] == "completed"
    assert final.update["locations"] == [{"path": "/p/a.py", "line": 12}]
    assert replay(notes)["call_1"]["locations"] == [{"path": "/p/a.py", "line": 12}]

"""Message text: one messageId per message, and a guard that never loses text."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.acp_check import check, validating
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.wire import Notification


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


def _engine() -> UpdateEngine:
    return UpdateEngine("sess_t", clock=lambda: 0.0)


def _texts(engine_notes: list[Notification]) -> list[str]:
    return [n.update["content"]["text"] for n in engine_notes]


def test_equal_adjacent_deltas_are_both_delivered() -> None:
    engine = _engine()
    notes = check(engine.text("a ") + engine.text("=") + engine.text("=") + engine.text("="))
    assert _texts(notes) == ["a ", "=", "=", "="]


def test_a_consolidated_copy_of_streamed_text_is_suppressed() -> None:
    engine = _engine()
    notes = engine.text("Hello") + engine.text(", world")
    assert engine.consolidated_text("Hello, world") == []
    assert _texts(check(notes)) == ["Hello", ", world"]


def test_a_consolidated_copy_sends_only_what_was_not_streamed() -> None:
    engine = _engine()
    notes = engine.text("Hello, wo")
    notes += engine.consolidated_text("Hello, world")
    assert _texts(check(notes)) == ["Hello, wo", "rld"]
    assert engine.consolidated_text("Hello") == [], "a prefix was already delivered"


def test_a_diverging_consolidated_text_is_delivered_not_dropped() -> None:
    engine = _engine()
    engine.text("Hello")
    (note,) = check(engine.consolidated_text("Goodbye"))
    assert note.update["content"]["text"] == "Goodbye"


def test_a_replayed_provider_event_is_suppressed_by_identity() -> None:
    engine = _engine()
    notes = engine.text("=", key=("msg_1", 3))
    notes += engine.text("=", key=("msg_1", 3))  # the same event again (sequence 3)
    notes += engine.text("=", key=("msg_1", 4))  # equal text, another event: delivered
    assert _texts(check(notes)) == ["=", "="]


def test_all_chunks_of_a_message_share_its_id_and_the_guard_resets() -> None:
    engine = _engine()
    first = engine.text("a", key=1) + engine.text("b", key=2)
    engine.end_message()
    second = engine.text("a", key=1) + engine.consolidated_text("a")
    ids = {n.update["messageId"] for n in first}
    assert len(ids) == 1
    assert _texts(second) == ["a"], "keys and delivered text reset with the message"
    assert second[0].update["messageId"] not in ids


def test_thoughts_are_their_own_message() -> None:
    engine = _engine()
    notes = check(engine.thought("hmm") + engine.text("yes") + engine.thought(""))
    assert [n.kind for n in notes] == ["agent_thought_chunk", "agent_message_chunk"]
    assert notes[0].update["messageId"] != notes[1].update["messageId"]


def test_plan_updates_are_valid() -> None:
    engine = _engine()
    (note,) = check(
        engine.plan([{"content": "Read the loader", "priority": "high", "status": "in_progress"}])
    )
    assert note.update["entries"][0]["status"] == "in_progress"

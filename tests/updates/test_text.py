"""Message text: one messageId per message, and no text ever dropped."""

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


def test_all_chunks_of_a_message_share_its_id_and_the_next_message_gets_a_new_one() -> None:
    engine = _engine()
    first = engine.text("a") + engine.text("b")
    engine.end_message()
    second = engine.text("a") + engine.text("a")
    ids = {n.update["messageId"] for n in first}
    assert len(ids) == 1
    assert _texts(check(second)) == ["a", "a"]
    assert {n.update["messageId"] for n in second}.isdisjoint(ids)
    assert len({n.update["messageId"] for n in second}) == 1


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

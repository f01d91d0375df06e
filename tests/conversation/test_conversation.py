"""``Conversation``: its verbs, its record, and a restore that sends the same bytes."""

from __future__ import annotations

import json

import pytest

from tests.context.support import read_loop
from toolwire.context import Budget, ContextMeter, build_compaction, window_for
from toolwire.conversation import Conversation, ConversationRecord
from toolwire.errors import UsageError
from toolwire.handoff import build_handoff
from toolwire.history import Message, user

WINDOW = window_for("small-model", context_window=24_000, max_output_tokens=2_048)
BEFORE = [user("an old question"), Message("assistant", ())]


def _compacted(history: list[Message]) -> Conversation:
    conversation = Conversation(history, offset=len(BEFORE))
    compaction = build_compaction(history, Budget(WINDOW, 2000), target="small")
    conversation.compacted(compaction, "small")
    return conversation


def _stored(record: ConversationRecord) -> ConversationRecord:
    """The record after a trip through a JSON store."""
    return ConversationRecord.from_json(json.loads(json.dumps(record.to_json())))


def test_a_compaction_after_a_clear_restores_against_the_history_since_it() -> None:
    history = read_loop(25)
    live = _compacted(history)
    assert live.handoff is not None
    later = user("and now the tests")
    live.history.append(later)
    reopened = Conversation.restore(_stored(live.record()), [*BEFORE, *history, later])
    assert reopened.request() == live.request()
    assert reopened.offset == len(BEFORE)


def test_a_switch_keeps_its_block_whatever_wrote_the_summary() -> None:
    history = read_loop(6, size=500, backend="one")
    live = Conversation(history)
    handoff = build_handoff(history, len(history) - 1, target="two", summary=False)
    live.switched(handoff, "two")
    reopened = Conversation.restore(_stored(live.record()), history)
    assert reopened.request() == live.request() == handoff.apply(history)


def test_rewind_changes_the_conversation_in_place_and_keeps_its_meter() -> None:
    history = read_loop(25)
    live = _compacted(history)
    gauge = live.meter_for("small", WINDOW)
    gauge.used, gauge.cost = 5000, 0.25
    # Back to before the compaction's point: the raw history again, the same meter.
    live.rewound(ConversationRecord(len(BEFORE)), [*BEFORE, *history[:3]], "small")
    assert live.request() == history[:3]
    assert live.meter_for("small", WINDOW) is gauge
    assert (gauge.used, gauge.cost) == (0, 0.25)  # measured again; the cost carries
    live.cleared()
    assert live.request() == []
    assert live.record() == ConversationRecord(len(BEFORE) + 3, None, 1.0, "small")


def test_a_session_stored_before_the_record_loads_from_its_old_keys() -> None:
    history = read_loop(25)
    live = _compacted(history)
    compaction = build_compaction(history, Budget(WINDOW, 2000), target="small")
    point = compaction.point(None)
    stored = {"at": point.at, "tail_from": point.tail_from, "block": point.block}
    stored |= {"cuts": [list(c) for c in point.cuts], "ratio": compaction.ratio}
    old = {"cleared_at": len(BEFORE), "compaction": stored, "other": 1}
    record = ConversationRecord.from_config(json.loads(json.dumps(old)))
    reopened = Conversation.restore(record, [*BEFORE, *history], "small")
    assert reopened.request() == live.request()
    assert record.ratio == compaction.ratio
    switched = ConversationRecord.from_config({"handoff_switch_at": 4})
    assert switched.legacy_switch == 4  # rebuilt offline by the agent, as before


def test_a_record_of_another_version_is_refused() -> None:
    data = {**ConversationRecord().to_json(), "version": 99}
    with pytest.raises(UsageError, match="version 99"):
        ConversationRecord.from_config({"conversation": data})
    with pytest.raises(UsageError):
        ConversationRecord.from_json({"version": 1})


def test_unsaved_is_the_record_only_when_it_changed() -> None:
    history = read_loop(25)
    reopened = Conversation.restore(_compacted(history).record(), [*BEFORE, *history])
    assert reopened.unsaved() is None  # as stored
    reopened.meter = ContextMeter(WINDOW, owner="small", ratio=0.5)
    changed = reopened.unsaved()
    assert changed is not None
    assert (changed.ratio, changed.metered) == (0.5, "small")
    assert reopened.unsaved() is None

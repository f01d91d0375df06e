"""The closed ``session/update`` vocabulary: every kind toolwire writes has a v2 decision.

Each kind is built by its builder and passed through ``V2Renderer``: what comes out is
valid per the official ACP v2 draft schema, or nothing comes out and ``DROPPED`` says why.
A kind added to ``SessionUpdateKind`` fails here (and the type check of every dispatcher)
until it is decided. A kind toolwire does not know is never dropped without a word.
"""

from __future__ import annotations

import json
from typing import Any, get_args, get_type_hints

import pytest

from tests import acp_check_v2
from toolwire.updates import builders as b
from toolwire.updates import builders_v2 as b2
from toolwire.updates.kinds import KINDS, SessionUpdate, SessionUpdateKind, known_kind
from toolwire.updates.v2 import DROPPED, NoV2FormError, V2Renderer
from toolwire.updates.wire import diff_content, location, plan_entry, text_content

OPTION = {
    "id": "mode",
    "name": "Mode",
    "category": "mode",
    "type": "select",
    "currentValue": "ask",
    "options": [{"value": "ask", "name": "Ask"}],
}
CARD = {
    "toolCallId": "c1",
    "title": "Edit a.py",
    "kind": "edit",
    "status": "pending",
    "content": [diff_content("/p/a.py", "new\n", "old\n")],
    "locations": [location("/p/a.py", 1)],
}
#: One update of every kind, each made by its builder.
SAMPLES: dict[SessionUpdateKind, SessionUpdate] = {
    "user_message_chunk": b.text_chunk("user_message_chunk", "hi", "m1"),
    "agent_message_chunk": b.text_chunk("agent_message_chunk", "Done.", "m2"),
    "agent_thought_chunk": b.text_chunk("agent_thought_chunk", "Hm.", "m3"),
    "tool_call": b.tool_call(CARD),
    "tool_call_update": b.tool_call_update("c1", status="completed", content=[text_content("ok")]),
    "plan": b.plan_update([plan_entry("Read", "pending", "high")]),
    "current_mode_update": b.mode_update("plan"),
    "config_option_update": b.options_update([OPTION]),
    "available_commands_update": b.commands_update(
        [{"name": "mode", "description": "Switch", "input": {"hint": "a mode"}}]
    ),
    "session_info_update": b.info_update("Fix it", "2026-01-02T03:04:05Z"),
    "usage_update": b.usage_update(1200, 200000, {"amount": 0.5, "currency": "USD"}),
    "compaction_update": b.compaction_update("k1", "completed", summary=[text_content("S")]),
    "notice": b.notice("Server x failed", "warning", "It exited."),
    "subagent_update": b.subagent_update(
        "child-1", "explore (find tests)", {"state": "running"}, description="find tests"
    ),
    "state_update": b2.state_update("idle", "end_turn"),
    "user_message": b2.user_message("s-u1", [{"type": "text", "text": "hi"}]),
    "terminal_update": b2.terminal_started("t1", "ls", "/p"),
    "terminal_output_chunk": b2.terminal_output("t1", b"a.py\n"),
}
#: The decision for each kind: the v2 kinds it becomes, or None (dropped, ``DROPPED``).
DECISIONS: dict[str, tuple[str, ...] | None] = {
    "user_message_chunk": ("user_message_chunk",),
    "agent_message_chunk": ("agent_message_chunk",),
    "agent_thought_chunk": ("agent_thought_chunk",),
    "tool_call": ("tool_call_update", "tool_call_content_chunk"),
    "tool_call_update": ("tool_call_update",),
    "plan": ("plan_update",),
    "current_mode_update": None,
    "config_option_update": ("config_option_update",),
    "available_commands_update": ("available_commands_update",),
    "session_info_update": ("session_info_update",),
    "usage_update": ("usage_update",),
    "compaction_update": ("compaction_update",),
    "notice": ("notice",),
    "subagent_update": None,
    "state_update": ("state_update",),
    "user_message": ("user_message",),
    "terminal_update": ("terminal_update",),
    "terminal_output_chunk": ("terminal_output_chunk",),
}


def _tags(member: Any) -> set[str]:
    return set(get_args(get_type_hints(member)["sessionUpdate"]))


def test_the_union_and_its_kinds_agree() -> None:
    tags = set().union(*(_tags(m) for m in get_args(SessionUpdate)))
    assert tags == KINDS == set(get_args(SessionUpdateKind))
    assert set(SAMPLES) == KINDS == set(DECISIONS)
    assert all(known_kind(update) == kind for kind, update in SAMPLES.items())


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_has_a_v2_decision(kind: SessionUpdateKind) -> None:
    # The updates of a card (tool_call, then tool_call_update) share one renderer.
    renderer = V2Renderer("s1")
    if kind == "tool_call_update":
        renderer.render(SAMPLES["tool_call"])
    out = renderer.render(SAMPLES[kind])
    decided = DECISIONS[kind]
    if decided is None:
        assert out == []
        assert len(DROPPED[kind]) > 40, "a dropped kind says why, in words"
        return
    assert kind not in DROPPED
    assert tuple(u["sessionUpdate"] for u in out) == decided
    for update in out:
        acp_check_v2.check_update("s1", update)


def test_subagent_update_is_dropped_for_v2_and_v2_says_why() -> None:
    update = SAMPLES["subagent_update"]
    assert V2Renderer("s1").render(update) == []
    assert "digest" in DROPPED["subagent_update"]


@pytest.mark.parametrize("kind", ["mystery_update", "", None])
def test_a_kind_toolwire_does_not_know_is_never_dropped_unsaid(kind: Any) -> None:
    with pytest.raises(NoV2FormError, match="has no ACP v2 form"):
        V2Renderer("s1").render({"sessionUpdate": kind, "x": 1})


@pytest.mark.parametrize("kind", ["_toolwire/probe", "plan_update", "agent_message"])
def test_extension_and_v2_kinds_pass_unchanged(kind: str) -> None:
    update = {"sessionUpdate": kind, "planId": "p"}
    assert V2Renderer("s1").render(update) == [update]


def test_subagent_update_keeps_its_wire_text() -> None:
    live = b.subagent_update("c1", "explore (look)", {"state": "running"}, description="look")
    replay = b.subagent_update("c1", None, {"state": "idle"}, described=False)
    assert json.dumps(live, separators=(",", ":")) == (
        '{"sessionUpdate":"subagent_update","sessionId":"c1","title":"explore (look)",'
        '"description":"look","state":{"state":"running"}}'
    )
    assert json.dumps(replay, separators=(",", ":")) == (
        '{"sessionUpdate":"subagent_update","sessionId":"c1","title":null,"state":{"state":"idle"}}'
    )

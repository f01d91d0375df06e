"""Every ``session/update`` built whole (``toolwire.updates.builders``) is a valid ACP v1
``SessionNotification``, written in the key order toolwire has always used."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.acp_check import check
from toolwire.updates import builders as b
from toolwire.updates.render import Envelope
from toolwire.updates.wire import plan_entry, text_content

OPTION = {
    "id": "mode",
    "name": "Mode",
    "category": "mode",
    "type": "select",
    "currentValue": "ask",
    "options": [{"value": "ask", "name": "Ask"}],
}
CASES: dict[str, tuple[Any, str]] = {
    "user text": (
        b.text_chunk("user_message_chunk", "hi", "m1"),
        '"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"',
    ),
    "thought": (
        b.text_chunk("agent_thought_chunk", "hm", "m2"),
        '"agent_thought_chunk","content":{"type":"text","text":"hm"},"messageId":"m2"',
    ),
    "plan": (
        b.plan_update([plan_entry("Read", "pending", "high")]),
        '"plan","entries":[{"content":"Read","priority":"high","status":"pending"}]',
    ),
    "tool call": (
        b.tool_call(
            {"toolCallId": "c1", "title": "Go?", "kind": "switch_mode", "status": "pending"}
        ),
        '"tool_call","toolCallId":"c1","title":"Go?","kind":"switch_mode","status":"pending"',
    ),
    "tool call update": (
        b.tool_call_update("c1", status="failed", content=[text_content("no")]),
        '"tool_call_update","toolCallId":"c1","status":"failed","content":[{"type":"content",'
        '"content":{"type":"text","text":"no"}}]',
    ),
    "mode": (b.mode_update("plan"), '"current_mode_update","currentModeId":"plan"'),
    "options": (b.options_update([OPTION]), '"config_option_update","configOptions":[{"id":'),
    "commands": (
        b.commands_update([{"name": "clear", "description": "Start over"}]),
        '"available_commands_update","availableCommands":[{"name":"clear",',
    ),
    "info": (
        b.info_update("Fix it", "2026-01-02T03:04:05Z"),
        '"session_info_update","title":"Fix it","updatedAt":"2026-01-02T03:04:05Z"',
    ),
    "usage": (b.usage_update(1200, 200000), '"usage_update","used":1200,"size":200000'),
    "usage with cost": (
        b.usage_update(1, 2, {"amount": 0.5, "currency": "USD"}),
        '"usage_update","used":1,"size":2,"cost":{"amount":0.5,"currency":"USD"}',
    ),
    "compaction started": (
        b.compaction_update("k1", "in_progress"),
        '"compaction_update","compactionId":"k1","status":"in_progress"',
    ),
    "compaction done": (
        b.compaction_update("k1", "completed", summary=[{"type": "text", "text": "S"}]),
        '"compaction_update","compactionId":"k1","status":"completed","summary":[{"type":"text"',
    ),
    "compaction failed": (
        b.compaction_update("k1", "failed", error="timed out"),
        '"compaction_update","compactionId":"k1","status":"failed","error":"timed out"',
    ),
    "notice": (b.notice("Server x failed"), '"notice","severity":"warning","title":"Server x'),
    "notice with description": (
        b.notice("Compacted", "info", "The model now sees a summary."),
        '"notice","severity":"info","title":"Compacted","description":"The model now',
    ),
}


@pytest.mark.parametrize(("update", "expected"), CASES.values(), ids=list(CASES))
def test_a_built_update_is_valid_acp_in_its_key_order(update: Any, expected: str) -> None:
    (note,) = check([Envelope("s1").notify(update)])
    assert ('"update":{"sessionUpdate":' + expected).encode() in note.line
    assert json.loads(note.line)["params"]["update"] == update

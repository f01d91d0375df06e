"""Server-run tool calls (ToolCallStart.server) as the editor and the agent see them."""

from __future__ import annotations

import json

from toolwire.agent.turn.collect import ResponseCollector
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallEnd, ToolCallStart
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.translate import ResponseTranslator

EVENTS: list[Event] = [
    ToolCallStart("srv_1", "web_search", 0, server=True),
    ToolCallEnd("srv_1", arguments={"query": "acp"}, result=[{"url": "https://x.test"}]),
    TextDelta("found"),
    MessageEnd("end_turn"),
]


def test_a_server_call_is_shown_completed_with_its_result() -> None:
    translator = ResponseTranslator(UpdateEngine("s"), cwd="/tmp")
    lines = [json.loads(n.line) for n in translator.feed_all(EVENTS, 0.0)]
    lines += [json.loads(n.line) for n in translator.close(0.0)]
    updates = [ln["params"]["update"] for ln in lines]
    last = [u for u in updates if u.get("toolCallId") == "srv_1"][-1]
    assert last["status"] == "completed"
    assert "https://x.test" in json.dumps(last["content"])
    assert translator.calls["srv_1"].status == "completed"


def test_a_server_call_is_never_a_call_for_the_agent_to_run() -> None:
    collector = ResponseCollector()
    for event in EVENTS:
        collector.feed(event)
    assert collector.ordered_calls() == []
    assert collector.text() == "found"

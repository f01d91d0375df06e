"""Server-run tool calls (ToolCallStart.server) as the editor and the agent see them."""

from __future__ import annotations

import json
from typing import Any

from tests.acp_check import check, replay
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


def _card(result: object, name: str = "web_search") -> dict[str, Any]:
    """The editor's view of a provider-run call that ended with ``result``."""
    translator = ResponseTranslator(UpdateEngine("s"), cwd="/tmp")
    events: list[Event] = [
        ToolCallStart("srv_1", name, 0, server=True),
        ToolCallEnd("srv_1", arguments={"query": "acp"}, result=result),
        MessageEnd("end_turn"),
    ]
    notes = check([*translator.feed_all(events, 0.0), *translator.close(0.0)])
    return replay(notes)["srv_1"]


def test_anthropic_search_hits_are_resource_links_in_the_card() -> None:
    hits = [
        {
            "type": "web_search_result",
            "title": "ACP",
            "url": "https://agentclientprotocol.com/",
            "encrypted_content": "EqgfCioIARgB...",
            "page_age": "2 days ago",
        },
        {"type": "web_search_result", "title": "", "url": "https://x.test/a"},
    ]
    card = _card(hits)
    assert card["title"] == "Search the web: acp"
    assert card["kind"] == "search"
    assert [c["content"] for c in card["content"]] == [
        {"type": "resource_link", "uri": "https://agentclientprotocol.com/", "name": "ACP"},
        {"type": "resource_link", "uri": "https://x.test/a", "name": "https://x.test/a"},
    ]


def test_openai_search_sources_are_resource_links_once_each() -> None:
    item = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "acp",
            "sources": [
                {"type": "url", "url": "https://agentclientprotocol.com/"},
                {"type": "url", "url": "https://agentclientprotocol.com/"},
            ],
        },
    }
    card = _card(item)
    assert [c["content"]["uri"] for c in card["content"]] == ["https://agentclientprotocol.com/"]


def test_a_result_without_urls_stays_text() -> None:
    card = _card({"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"})
    assert card["content"][0]["content"]["type"] == "text"
    assert "max_uses_exceeded" in card["content"][0]["content"]["text"]

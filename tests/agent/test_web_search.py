"""``WebSearch`` through the agent: offered only where something searches, its hits as
numbered text for the model and ``resource_link`` blocks for the editor, a provider's
failure as one line while the turn goes on, and the backend's own search as a flag."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.agent.pair import AgentUnderTest, agent_under_test
from tests.agent.support import (
    answer,
    calls_by_id,
    check_wire,
)
from tests.fakes.http import FakeServer, Received, Reply
from toolwire.history import ToolResultPart

pytestmark = pytest.mark.anyio

HITS = [
    {"title": "ACP spec", "url": "https://agentclientprotocol.com/", "content": "The protocol."},
    {"title": "Ads", "url": "https://spam.example/acp", "content": "Buy."},
    {"title": "ACP Python SDK", "url": "https://github.com/agentclientprotocol/python-sdk"},
]


def searxng(received: Received) -> Reply:
    """A SearXNG that answers every query with ``HITS`` (as if engines ignored site:)."""
    query = parse_qs(urlsplit(received.path).query)
    body = {"query": query["q"][0], "results": HITS}
    return Reply(200, [json.dumps(body).encode()], content_type="application/json")


def pair(tmp_path: Path, web: str) -> AbstractAsyncContextManager[AgentUnderTest]:
    """The ``acp`` pair with ``web`` as the config's ``[tools.web]`` table."""
    return agent_under_test(tmp_path, config="\n[tools.web]\n" + web)


def _result(acp: AgentUnderTest) -> ToolResultPart:
    """The tool result the model was sent in its second request."""
    part = acp.model.requests[1].messages[-1].parts[0]
    assert isinstance(part, ToolResultPart)
    return part


def _offered(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


async def test_results_reach_the_model_as_text_and_the_editor_as_links(tmp_path: Path) -> None:
    with FakeServer(respond=searxng) as server:
        web = f'search = "searxng"\nsearxng_url = "{server.url}"\n'
        async with pair(tmp_path, web) as acp:
            args = {"query": "agent client protocol", "blocked_domains": ["spam.example"]}
            acp.model.script(answer(("tool", "WebSearch", args, "toolu_s")), "Found it.")
            sid = await acp.start()
            assert (await acp.prompt(sid, "Find the ACP spec")).stop_reason == "end_turn"
            assert check_wire(acp.run.wire) > 0  # every line against the ACP schema
            notes = acp.run.notifications()
            body = acp.model.bodies[0]
    assert "WebSearch" in _offered(body)
    assert parse_qs(urlsplit(server.requests[0].path).query)["q"] == [
        "agent client protocol -site:spam.example"
    ]
    call = calls_by_id(notes)["toolu_s"]
    assert (call["status"], call["kind"]) == ("completed", "search")
    assert call["title"] == "Search the web: agent client protocol"
    assert [c["content"] for c in call["content"]] == [
        {
            "type": "resource_link",
            "uri": "https://agentclientprotocol.com/",
            "name": "ACP spec",
            "description": "The protocol.",
        },
        {
            "type": "resource_link",
            "uri": "https://github.com/agentclientprotocol/python-sdk",
            "name": "ACP Python SDK",
        },
    ]
    assert _result(acp).content == (
        'Results for "agent client protocol":\n\n'
        "1. ACP spec\n   https://agentclientprotocol.com/\n   The protocol.\n\n"
        "2. ACP Python SDK\n   https://github.com/agentclientprotocol/python-sdk"
    )


async def test_a_provider_failure_is_one_line_and_the_turn_goes_on(tmp_path: Path) -> None:
    with FakeServer(
        respond=lambda _: Reply(403, [b"Forbidden"], content_type="text/plain")
    ) as server:
        web = f'search = "searxng"\nsearxng_url = "{server.url}"\n'
        async with pair(tmp_path, web) as acp:
            acp.model.script(answer(("tool", "WebSearch", {"query": "acp"}, "toolu_s")), "No luck.")
            sid = await acp.start()
            assert (await acp.prompt(sid, "Search")).stop_reason == "end_turn"
            check_wire(acp.run.wire)
            notes = acp.run.notifications()
    call = calls_by_id(notes)["toolu_s"]
    assert call["status"] == "failed"
    said = _result(acp)
    assert said.is_error
    assert said.content == (
        "SearXNG refused JSON (HTTP 403); add json to search.formats in its settings.yml"
    )


async def test_with_nothing_configured_no_search_is_offered(acp: AgentUnderTest) -> None:
    acp.model.script("Hello.")
    sid = await acp.start()
    await acp.prompt(sid, "Hi")
    body = acp.model.bodies[0]
    assert "WebSearch" not in _offered(body)
    assert all(t.get("type") is None for t in body["tools"])  # no server tool either


async def test_native_search_sends_the_server_tool_not_websearch(tmp_path: Path) -> None:
    async with pair(tmp_path, 'search = "native"\n') as acp:
        acp.model.script("Hello.")
        sid = await acp.start()
        await acp.prompt(sid, "Hi")
        body = acp.model.bodies[0]
    assert "WebSearch" not in _offered(body)
    assert body["tools"][0] == {"type": "web_search_20250305", "name": "web_search"}

"""The proxy's own search loop: the model's ``web_search`` calls run, the upstream continued."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import Message as SdkMessage
from anthropic.types import WebSearchToolResultBlock

from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.support import chat_chunk, openai_text_stream, running, write_config
from tests.proxy.test_websearch import HITS, Hit
from toolwire.backends.base import ModelRequest
from toolwire.events import (
    Event,
    MessageEnd,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.history import ToolResultPart, user
from toolwire.proxy import load_settings, websearch
from toolwire.proxy.encode import AnthropicEncoder, accumulate
from toolwire.proxy.searching import SearchRun, searched
from toolwire.proxy.upstream import Opened
from toolwire.proxy.websearch import FUNCTION, SearchTool
from toolwire.web import SearchError


def _call(ident: str, query: str) -> list[Event]:
    return [
        ToolCallStart(ident, "web_search", 0),
        ToolCallDelta(ident, f'{{"query": "{query}"}}'),
        ToolCallEnd(ident, {"query": query}),
        MessageEnd("tool_use", Usage(output_tokens=4)),
    ]


def _answer(text: str) -> list[Event]:
    return [TextDelta(text), MessageEnd("end_turn", Usage(output_tokens=6))]


async def _gen(events: list[Event]) -> AsyncGenerator[Event, None]:
    for event in events:
        yield event


def _opened(events: list[Event]) -> Opened:
    return Opened(events[0], _gen(events[1:]), 0.0)


class Upstream:
    """Scripted upstream rounds after the first; keeps each continued request."""

    def __init__(self, *rounds: list[Event]) -> None:
        self.rounds = list(rounds)
        self.requests: list[ModelRequest] = []

    async def reopen(self, request: ModelRequest) -> Opened:
        self.requests.append(request)
        return _opened(self.rounds.pop(0))


def _run(
    first: list[Event], upstream: Upstream, *, max_uses: int = 5, fail: bool = False
) -> tuple[dict[str, Any], list[str]]:
    queries: list[str] = []

    async def search(query: str, tool: SearchTool) -> Sequence[Hit]:
        queries.append(query)
        if fail:
            raise SearchError("SearXNG is unreachable: start it or fix searxng_url")
        return HITS

    request = ModelRequest("", (user("What is new in asyncio?"),), (FUNCTION,))
    run = SearchRun(SearchTool(max_uses=max_uses), search, request, upstream.reopen)

    async def go() -> list[dict[str, Any]]:
        opened = await searched(_opened(first), run)
        encoder = AnthropicEncoder("claude-opus-5-5")
        payloads = [encoder.start(), *encoder.feed(opened.first)]
        async for event in opened.rest:
            payloads += encoder.feed(event)
        return payloads

    return accumulate(asyncio.run(go())), queries


def test_the_proxy_searches_and_the_model_answers_in_the_same_message() -> None:
    upstream = Upstream(_answer("asyncio.timeout() is new."))
    body, queries = _run([TextDelta("Let me check."), *_call("call_1", "asyncio news")], upstream)
    message = SdkMessage.model_validate(body)
    assert [b.type for b in message.content] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert queries == ["asyncio news"]
    assert message.stop_reason == "end_turn"
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1
    assert message.usage.output_tokens == 10  # both rounds
    (continued,) = upstream.requests
    assert FUNCTION in continued.tools  # searches left: still offered
    searching, results = continued.messages[-2:]
    assert searching.tool_calls()[0].arguments == {"query": "asyncio news"}
    (result,) = results.parts
    assert isinstance(result, ToolResultPart)
    assert result.call_id == "call_1"
    assert HITS[0].url in result.content
    assert HITS[1].snippet in result.content


def test_searches_past_max_uses_are_refused_and_the_tool_withdrawn() -> None:
    upstream = Upstream(_call("call_2", "second"), _answer("Done."))
    body, queries = _run(_call("call_1", "first"), upstream, max_uses=1)
    message = SdkMessage.model_validate(body)
    results = [b for b in message.content if isinstance(b, WebSearchToolResultBlock)]
    assert isinstance(results[0].content, list)
    assert not isinstance(results[1].content, list)
    assert results[1].content.error_code == "max_uses_exceeded"
    assert queries == ["first"]
    # Used up: the model is asked to answer without the tool (one that calls it anyway
    # is refused, as above).
    assert FUNCTION not in upstream.requests[0].tools
    assert message.content[-1].type == "text"


def test_a_provider_failure_is_an_error_result_and_the_turn_goes_on() -> None:
    upstream = Upstream(_answer("The search is unavailable."))
    body, _ = _run(_call("call_1", "x"), upstream, fail=True)
    message = SdkMessage.model_validate(body)
    result = message.content[1]
    assert isinstance(result, WebSearchToolResultBlock)
    assert not isinstance(result.content, list)
    assert result.content.error_code == "unavailable"
    assert message.stop_reason == "end_turn"
    assert "unavailable" in upstream.requests[0].messages[-1].parts[0].content  # type: ignore[union-attr]


def test_a_message_with_client_calls_ends_for_the_client_to_run_them() -> None:
    read: list[Event] = [
        ToolCallStart("call_r", "Read", 1),
        ToolCallDelta("call_r", '{"file_path": "a.py"}'),
        ToolCallEnd("call_r", {"file_path": "a.py"}),
    ]
    first: list[Event] = [*_call("call_1", "q")[:3], *read, MessageEnd("tool_use")]
    upstream = Upstream()
    body, queries = _run(first, upstream)
    message = SdkMessage.model_validate(body)
    assert [b.type for b in message.content] == [
        "tool_use",
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert message.stop_reason == "tool_use"
    assert queries == ["q"]
    assert upstream.requests == []


def _searxng_config(tmp: Path, upstream: str, searxng: str) -> Path:
    config = write_config(tmp, upstream, upstream)
    web = f'[tools.web]\nsearch = "searxng"\nsearxng_url = "{searxng}"\n'
    config.write_text(config.read_text() + web, encoding="utf-8")
    return config


def _search_call() -> list[bytes]:
    function = {"name": "web_search", "arguments": '{"query": "asyncio news"}'}
    named = {"index": 0, "id": "call_s", "type": "function", "function": function}
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"tool_calls": [named]})),
        (None, chat_chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]
    return [sse([e]) for e in events]


@pytest.mark.parametrize("streamed", [True, False])
def test_the_sdk_reads_the_proxy_search_answer(tmp_path: Path, streamed: bool) -> None:
    hits = {"results": [{"title": h.title, "url": h.url, "content": h.snippet} for h in HITS]}
    with FakeServer() as upstream, FakeServer() as searxng:
        upstream.script(Reply(chunks=_search_call()), Reply(chunks=openai_text_stream("New.")))
        searxng.script(Reply(chunks=[json.dumps(hits).encode()], content_type="application/json"))
        settings = load_settings(_searxng_config(tmp_path, upstream.url, searxng.url))
        with running(settings) as url:
            client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
            args: dict[str, Any] = {
                "model": "local,qwen3",
                "max_tokens": 1024,
                "messages": [{"role": "user", "content": "Search: asyncio news"}],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            }
            if streamed:
                with client.messages.stream(**args) as stream:
                    message = stream.get_final_message()
            else:
                message = client.messages.create(**args)
    assert [b.type for b in message.content] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    result = message.content[1]
    assert isinstance(result, WebSearchToolResultBlock)
    assert isinstance(result.content, list)
    assert [r.url for r in result.content] == [h.url for h in HITS]
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1
    first, second = (r.json() for r in upstream.requests)
    assert any(t["function"]["name"] == "web_search" for t in first["tools"])
    assert HITS[0].snippet in second["messages"][-1]["content"]  # the results went upstream
    assert "q=asyncio+news" in searxng.requests[0].path


def test_without_a_provider_the_tool_is_left_out_and_the_setting_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(websearch, "_hinted", False)
    with FakeServer() as upstream:
        upstream.script(*(Reply(chunks=openai_text_stream("No search.")) for _ in range(2)))
        with running(load_settings(write_config(tmp_path, upstream.url, upstream.url))) as url:
            client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
            for _ in range(2):
                client.messages.create(
                    model="local,qwen3",
                    max_tokens=64,
                    messages=[{"role": "user", "content": "Search: asyncio news"}],
                    tools=[{"type": "web_search_20250305", "name": "web_search"}],
                )
    assert all("tools" not in r.json() for r in upstream.requests)
    hints = [r for r in caplog.records if "[tools.web] search" in r.getMessage()]
    assert len(hints) == 1

"""The proxy's own search loop: the model's ``web_search`` calls run, the upstream continued."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from anthropic.types import Message as SdkMessage
from anthropic.types import WebSearchToolResultBlock

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
from toolwire.proxy.encode import AnthropicEncoder, accumulate
from toolwire.proxy.searching import SearchRun, searched
from toolwire.proxy.upstream import Opened
from toolwire.proxy.websearch import FUNCTION, SearchTool


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
            raise RuntimeError("SearXNG is unreachable")
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

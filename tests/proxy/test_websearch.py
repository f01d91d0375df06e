"""Anthropic's web search blocks, both ways, with the ``anthropic`` SDK's types as the oracle:
what the proxy streams to Claude Code, and the history Claude Code sends back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anthropic
import pydantic
from anthropic.types import (
    Message as SdkMessage,
)
from anthropic.types import (
    RawMessageStreamEvent,
    ServerToolUseBlock,
    TextBlock,
    WebSearchResultBlock,
    WebSearchToolResultBlock,
    WebSearchToolResultError,
)

from tests.proxy.support import request_body
from toolwire.events import (
    Event,
    MessageEnd,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.history import TextPart, ToolCallPart, ToolResultPart
from toolwire.proxy.encode import AnthropicEncoder, accumulate
from toolwire.proxy.translate import import_history, raw_index, to_model_request
from toolwire.proxy.websearch import error_content, result_items, search_tool

_EVENTS = pydantic.TypeAdapter(RawMessageStreamEvent)
SEARCH_TOOL = {
    "type": "web_search_20250305",
    "name": "web_search",
    "max_uses": 2,
    "allowed_domains": ["docs.python.org"],
}


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


HITS = [
    Hit("asyncio — Asynchronous I/O", "https://docs.python.org/3/library/asyncio.html", "Write"),
    Hit("Timeouts", "https://docs.python.org/3/library/asyncio-task.html", "asyncio.timeout()"),
]


def _server_call(ident: str, query: str, result: Any) -> list[Event]:
    return [
        ToolCallStart(ident, "web_search", 0, server=True),
        ToolCallDelta(ident, f'{{"query": "{query}"}}'),
        ToolCallEnd(ident, {"query": query}, result=result),
    ]


def _encoded(events: list[Event]) -> list[dict[str, Any]]:
    encoder = AnthropicEncoder("claude-opus-5-5")
    payloads = [encoder.start()]
    for event in events:
        payloads += encoder.feed(event)
    return payloads


def test_a_search_streams_as_anthropic_server_tool_blocks() -> None:
    events: list[Event] = [
        TextDelta("Searching."),
        *_server_call("srvtoolu_01", "asyncio timeout", result_items(HITS)),
        TextDelta("Use asyncio.timeout()."),
        MessageEnd("end_turn", Usage(output_tokens=9)),
    ]
    payloads = _encoded(events)
    for payload in payloads:  # every event is one the SDK's stream parser knows
        _EVENTS.validate_python(payload)
    message = SdkMessage.model_validate(accumulate(payloads))
    text, use, result, answer = message.content
    assert isinstance(text, TextBlock)
    assert isinstance(answer, TextBlock)
    assert isinstance(use, ServerToolUseBlock)
    assert (use.id, use.name, use.input) == (
        "srvtoolu_01",
        "web_search",
        {"query": "asyncio timeout"},
    )
    assert isinstance(result, WebSearchToolResultBlock)
    assert result.tool_use_id == "srvtoolu_01"
    assert isinstance(result.content, list)
    assert all(isinstance(item, WebSearchResultBlock) for item in result.content)
    assert [(r.title, r.url) for r in result.content] == [(h.title, h.url) for h in HITS]
    assert message.stop_reason == "end_turn"
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1


def test_a_failed_search_is_the_documented_error_and_not_counted() -> None:
    events: list[Event] = [
        *_server_call("srvtoolu_02", "x", error_content("unavailable")),
        TextDelta("The search failed."),
        MessageEnd("end_turn"),
    ]
    message = SdkMessage.model_validate(accumulate(_encoded(events)))
    result = message.content[1]
    assert isinstance(result, WebSearchToolResultBlock)
    assert isinstance(result.content, WebSearchToolResultError)
    assert result.content.error_code == "unavailable"
    assert message.usage.server_tool_use is None


def _searched_history() -> list[dict[str, Any]]:
    """A turn as Claude Code sends it back after a search answered by the proxy."""
    use = ServerToolUseBlock(
        type="server_tool_use", id="srvtoolu_03", name="web_search", input={"query": "q"}
    )
    result = WebSearchToolResultBlock(
        type="web_search_tool_result",
        tool_use_id="srvtoolu_03",
        content=[WebSearchResultBlock.model_validate(i) for i in result_items(HITS)],
    )
    assistant = [
        {"type": "text", "text": "Let me look."},
        use.model_dump(exclude_none=True),
        result.model_dump(exclude_none=True),
        {"type": "text", "text": "Use asyncio.timeout()."},
    ]
    return [
        {"role": "user", "content": "Perform a web search for the query: q"},
        {"role": "assistant", "content": assistant},
        {"role": "user", "content": "Thanks."},
    ]


def test_searches_sent_back_become_a_call_and_its_results() -> None:
    body = request_body(_searched_history())
    history = import_history(body)
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "user"]
    assert history[1].parts == (
        TextPart("Let me look."),
        ToolCallPart("srvtoolu_03", "web_search", {"query": "q"}),
    )
    (result,) = history[2].parts
    assert isinstance(result, ToolResultPart)
    assert (result.call_id, result.name, result.is_error) == ("srvtoolu_03", "web_search", False)
    for hit in HITS:  # title, address and snippet all reach the next model
        assert hit.title in result.content
        assert hit.url in result.content
        assert hit.snippet in result.content
    assert history[3].text() == "Use asyncio.timeout()."
    # The client's message boundaries still map onto the neutral history.
    assert raw_index(body, 4) == 2


def test_the_server_tool_is_a_function_only_when_the_proxy_can_search() -> None:
    tools = [*request_body([])["tools"], SEARCH_TOOL]
    body = request_body([{"role": "user", "content": "hi"}], tools=tools)
    offered = to_model_request(body, import_history(body), search=True).tools
    (function,) = [t for t in offered if t.name == "web_search"]
    assert function.input_schema["required"] == ["query"]
    without = to_model_request(body, import_history(body), search=False).tools
    assert [t.name for t in without] == ["Read"]
    tool = search_tool(body)
    assert tool is not None
    assert (tool.max_uses, tool.allowed_domains) == (2, ("docs.python.org",))


def test_the_sdk_names_every_error_code_the_proxy_sends() -> None:
    codes = anthropic.types.WebSearchToolResultErrorCode.__args__  # type: ignore[attr-defined]
    for code in ("unavailable", "max_uses_exceeded", "invalid_tool_input"):
        assert code in codes
        WebSearchToolResultError.model_validate(error_content(code))

"""The proxy runs the model's ``web_search`` calls and continues the conversation.

``searched(opened, run)`` wraps an opened upstream stream: the model's calls of the
``web_search`` function (``websearch.FUNCTION``) never reach the client as tool calls.
At the end of the model's message the proxy runs each search, yields it as a
server-run call (``ToolCallStart(server=True)`` ... ``ToolCallEnd(result=...)``, which
the encoder writes as ``server_tool_use`` and ``web_search_tool_result``), and sends the
upstream the same request with the call and its results appended; the answer streams on
into the same Anthropic message. A message that also called the client's tools ends
there (``tool_use``): the client runs those and sends the searches back in its history
(``websearch.unfold``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import httpx2

from toolwire.backends import http_client
from toolwire.backends.base import ModelRequest, TappableBackend
from toolwire.errors import ToolwireError
from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.history import Message, TextPart, ToolCallPart, ToolResultPart
from toolwire.proxy.errors import ProxyError
from toolwire.proxy.upstream import Opened, open_stream
from toolwire.proxy.websearch import (
    NAME,
    Result,
    SearchTool,
    error_content,
    query_of,
    result_items,
    result_text,
    search_tool,
    server_id,
)
from toolwire.web import SearchError, SearchSettings, search

Search = Callable[[str, SearchTool], Awaitable[Sequence[Result]]]
"""Runs one query within the tool's domain filters; raises on a provider failure."""

# Rounds of search-then-continue one response may take, whatever max_uses says: a model
# that keeps calling after its searches are refused must still end.
MAX_ROUNDS = 12
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchRun:
    """What one response's searches need: the tool's limits, the search, the request as
    sent, and how to send a continued one."""

    tool: SearchTool
    search: Search
    request: ModelRequest
    reopen: Callable[[ModelRequest], Awaitable[Opened]]


@dataclass(slots=True)
class _Round:
    """One upstream message as it went by: its text and the calls it made."""

    text: str = ""
    searches: list[ToolCallPart] = field(default_factory=list)
    other_calls: bool = False
    end: MessageEnd | None = None


def search_run(
    body: Mapping[str, Any],
    request: ModelRequest,
    backend: TappableBackend,
    settings: SearchSettings | None,
    client: httpx2.AsyncClient | None,
) -> SearchRun | None:
    """The searches of a translated request that asks for them, on the configured
    provider (None: no ``web_search`` tool in the request, or no provider)."""
    tool = search_tool(body)
    if tool is None or settings is None:
        return None
    return SearchRun(
        tool, partial(_provider, settings, client), request, partial(open_stream, backend)
    )


async def _provider(
    settings: SearchSettings, client: httpx2.AsyncClient | None, query: str, tool: SearchTool
) -> Sequence[Result]:
    if client is None:  # no lifespan (an app used without one): a client of its own
        async with http_client() as own:
            return await _provider(settings, own, query, tool)
    allowed, blocked = tool.allowed_domains, tool.blocked_domains
    return await search(
        settings, query, allowed_domains=allowed, blocked_domains=blocked, client=client
    )


async def searched(opened: Opened, run: SearchRun) -> Opened:
    """``opened`` with its ``web_search`` calls run by the proxy (see the module doc)."""
    events = _loop(opened, run)
    try:
        first = await events.__anext__()
    except StopAsyncIteration:  # the loop always ends with a MessageEnd or an error
        first = StreamError("the upstream sent an empty response")
    return Opened(first, events, opened.latency)


async def _loop(opened: Opened, run: SearchRun) -> AsyncGenerator[Event, None]:
    request, used, output = run.request, 0, 0
    for _ in range(MAX_ROUNDS):
        step = _Round()
        async for event in _round(opened, step):
            yield event
        end = step.end
        if end is None:  # cut or failed: the error was passed on
            return
        output += (end.usage.output_tokens or 0) if end.usage else 0
        if not step.searches:
            yield _with_output(end, output)
            return
        results: list[ToolResultPart] = []
        for call in step.searches:
            content, used = await _search(call, run, used)
            for event in _server_events(call, content):
                yield event
            results.append(ToolResultPart(call.id, NAME, result_text(content)))
        if step.other_calls:  # the client runs its calls; the searches come back in history
            yield _with_output(MessageEnd("tool_use", end.usage), output)
            return
        request = _continued(request, step, results, exhausted=used >= run.tool.max_uses)
        try:
            opened = await run.reopen(request)
        except (ProxyError, ToolwireError) as e:
            yield StreamError(f"the upstream failed after a web search: {e}")
            return
    yield StreamError(f"the model kept searching after {MAX_ROUNDS} rounds")


async def _round(opened: Opened, step: _Round) -> AsyncGenerator[Event, None]:
    """One upstream message's events, its ``web_search`` calls held back and noted."""
    held: dict[str, ToolCallStart] = {}
    try:
        async for event in _events(opened):
            if isinstance(event, ToolCallStart) and event.name == NAME and not event.server:
                held[event.id] = event
                continue
            if isinstance(event, ToolCallDelta) and event.id in held:
                continue
            if isinstance(event, ToolCallEnd) and event.id in held:
                signature = held[event.id].signature
                step.searches.append(ToolCallPart(event.id, NAME, event.arguments, signature))
                continue
            if isinstance(event, TextDelta):
                step.text += event.text
            elif isinstance(event, ToolCallStart):
                step.other_calls = True
            if isinstance(event, MessageEnd) and event.stop_reason != "error":
                step.end = event
                return
            yield event
    finally:
        await opened.rest.aclose()


async def _events(opened: Opened) -> AsyncGenerator[Event, None]:
    yield opened.first
    async for event in opened.rest:
        yield event


async def _search(call: ToolCallPart, run: SearchRun, used: int) -> tuple[Any, int]:
    """The result content of one call, and the searches used after it."""
    query = query_of(call.arguments)
    if query is None:
        return error_content("invalid_tool_input"), used
    if used >= run.tool.max_uses:
        return error_content("max_uses_exceeded"), used
    try:
        hits = await run.search(query, run.tool)
    except SearchError as e:  # the model's to handle, as with Anthropic's own search
        _log.warning("web search for the upstream failed: %s", e)  # one line, key scrubbed
        return error_content("unavailable"), used + 1
    return result_items(hits), used + 1


def _server_events(call: ToolCallPart, content: Any) -> list[Event]:
    """A search the proxy ran, as the events of a server-run call with its result."""
    query = query_of(call.arguments)
    arguments = {"query": query if query is not None else ""}
    ident = server_id()
    return [
        ToolCallStart(ident, NAME, 0, server=True),
        ToolCallDelta(ident, json.dumps(arguments, ensure_ascii=False)),
        ToolCallEnd(ident, arguments, result=content),
    ]


def _continued(
    request: ModelRequest, step: _Round, results: list[ToolResultPart], *, exhausted: bool
) -> ModelRequest:
    """The request with the searching message and its results appended; once the
    searches are used up, without the tool (the model must answer with what it has)."""
    parts: list[TextPart | ToolCallPart] = [TextPart(step.text)] if step.text else []
    parts += step.searches
    messages = (
        *request.messages,
        Message("assistant", tuple(parts)),
        Message("tool", tuple(results)),
    )
    tools = tuple(t for t in request.tools if t.name != NAME) if exhausted else request.tools
    return replace(request, messages=messages, tools=tools)


def _with_output(end: MessageEnd, output: int) -> MessageEnd:
    """``end`` reporting the output tokens of every round."""
    usage = end.usage or Usage()
    return MessageEnd(end.stop_reason, replace(usage, output_tokens=output or usage.output_tokens))


__all__ = ["MAX_ROUNDS", "Search", "SearchRun", "search_run", "searched"]

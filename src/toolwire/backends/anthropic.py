"""Anthropic Messages API (``POST /v1/messages``, SSE), and Anthropic-compatible endpoints.

GLM, Kimi, MiniMax and DeepSeek serve the same API under their own ``base_url`` (the
path ``/v1/messages`` is appended to it). Translation rules (docs/design.md, "Provider
rules a translation must keep"):

* tool results go in the user message after the ``tool_use`` blocks, as ``tool_result``
  blocks, first in that message and in call order; ``is_error`` is kept;
* ids must match ``^[a-zA-Z0-9_-]+$``: mapped once, the same on ``tool_use.id`` and
  ``tool_result.tool_use_id``;
* thinking goes back only to the backend that produced it, unmodified: ``thinking`` with
  its signature, ``redacted_thinking`` with its data; unsigned thinking is dropped (the
  API requires a signature and one is never invented);
* ``request.thinking`` becomes ``thinking`` with a token budget (``_thinking``), and then
  no ``temperature``;
* no empty text blocks, no empty messages; consecutive same-role messages are merged;
* with ``request.cache`` (the agent's requests), prompt-cache breakpoints
  (``mark_breakpoints``); without it the body carries none (the proxy relays the
  client's own).
"""

from __future__ import annotations

import itertools
from typing import Any, Final

from toolwire.backends._asks import anthropic_asks
from toolwire.backends._images import anthropic_image
from toolwire.backends._names import ANTHROPIC, ToolNames
from toolwire.backends._prepare import prepare
from toolwire.backends._schema import object_schema
from toolwire.backends._thinking import anthropic_thinking
from toolwire.backends.base import ModelRequest
from toolwire.backends.http import HTTPBackend
from toolwire.config.choices import ToolFormat
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolwire.history.pairing import IdMap, as_object, own_thinking
from toolwire.providers import PROFILES

API_VERSION = "2023-06-01"
CACHE_CONTROL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
"""Anthropic refuses a request with more ``cache_control`` blocks than this."""
_MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result"})


def build_body(
    request: ModelRequest,
    *,
    model: str,
    backend: str,
    tool_format: ToolFormat = "native",
    vision: bool = True,
) -> dict[str, Any]:
    """The Messages API request body for ``request`` (``stream: true``)."""
    native, history, system, names = prepare(
        request, ANTHROPIC, tool_format, vision=vision, json_field=False
    )
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": _messages(history, backend, names),
        "stream": True,
    }
    if system:
        body["system"] = system
    tools = _tools(request, names) if native else []
    if tools:
        body["tools"] = tools
    body.update(anthropic_asks(request, names, native=native))
    thinking = anthropic_thinking(request.thinking, request.max_tokens, body["messages"])
    if "tool_choice" in body:
        thinking = None  # the API refuses thinking beside a forced call: the call wins
    if thinking is not None:
        body["thinking"] = thinking  # the API refuses a temperature with it: none is sent
    elif request.temperature is not None:
        body["temperature"] = request.temperature
    if request.cache:
        mark_breakpoints(body)
    return body


WEB_SEARCH_TOOL: Final[dict[str, str]] = {"type": "web_search_20250305", "name": "web_search"}
"""Anthropic's server-run web search; its calls stream back as ``server_tool_use``."""


def _tools(request: ModelRequest, names: ToolNames) -> list[dict[str, Any]]:
    """The native ``tools`` of the body: web search when asked, then the function tools."""
    tools: list[dict[str, Any]] = [dict(WEB_SEARCH_TOOL)] if request.web_search else []
    # Web search first, so the cache breakpoint on the last tool stays on a function tool.
    tools.extend(
        {
            "name": names.wire(t.name),
            "description": t.description,
            "input_schema": object_schema(t.input_schema, flatten_top=True),
        }
        for t in request.tools
    )
    return tools


def mark_breakpoints(body: dict[str, Any]) -> None:
    """Mark the breakpoints of a ``build_body`` body in place, at most ``MAX_BREAKPOINTS``.

    Anthropic caches the prefix (tools, then system, then messages) up to each marked
    block, and a later request reads it back when its own breakpoint, or one of the 20
    blocks before one, ends the same prefix. So: the last tool (all tools), the system
    prompt (sent as one text block), and two rolling marks: the last block of the last
    message and of the last user message before it. The latter was the last message of
    the previous request of a tool loop, so each request finds the previous one's prefix
    at a breakpoint of its own, however many blocks the new turn added. No block is
    added or moved: the bytes before a breakpoint stay those of the previous request.
    """
    marks: list[dict[str, Any]] = []
    if body.get("tools"):
        marks.append(body["tools"][-1])
    if isinstance(body.get("system"), str):  # the builder leaves an empty one out
        system = {"type": "text", "text": body["system"]}
        body["system"] = [system]
        marks.append(system)
    messages: list[dict[str, Any]] = body["messages"]
    for index in _rolling(messages):
        last = _last_markable(messages[index]["content"])
        if last is not None:
            marks.append(last)
    for mark in marks[:MAX_BREAKPOINTS]:
        mark["cache_control"] = dict(CACHE_CONTROL)


def _rolling(messages: list[dict[str, Any]]) -> list[int]:
    """The last message and the last user message before it (indices, newest first)."""
    if not messages:
        return []
    last = len(messages) - 1
    before = (i for i in range(last - 1, -1, -1) if messages[i]["role"] == "user")
    return [last, *itertools.islice(before, 1)]


def _last_markable(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    # Thinking blocks cannot carry cache_control, and an empty text block is rejected
    # with or without one.
    markable = [b for b in blocks if b["type"] in _MARKABLE and b.get("text") != ""]
    return markable[-1] if markable else None


def _messages(history: list[Message], backend: str, names: ToolNames) -> list[dict[str, Any]]:
    ids = IdMap(64)
    wire_ids: list[str] = []
    out: list[dict[str, Any]] = []
    for message in history:
        if message.role == "assistant":
            wire_ids = ids.turn(c.id for c in message.tool_calls())
            role, blocks = "assistant", _assistant_blocks(message, backend, wire_ids, names)
        elif message.role == "tool":
            role, blocks = "user", _result_blocks(message, wire_ids)
        else:
            role = "user"
            blocks = _user_blocks(message)
        if not blocks:
            continue  # the API rejects an empty message
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # results first, then the user's text
        else:
            out.append({"role": role, "content": blocks})
    return out


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(anthropic_image(part))
    return blocks


def _assistant_blocks(
    message: Message, backend: str, wire_ids: list[str], names: ToolNames
) -> list[dict[str, Any]]:
    own = {id(p) for p in own_thinking(message, backend)}
    blocks: list[dict[str, Any]] = []
    calls = iter(wire_ids)
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            if id(part) in own:
                blocks.extend(_thinking_block(part))
        elif isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": next(calls),
                    "name": names.wire(part.name),
                    "input": as_object(part.arguments),
                }
            )
    return blocks


def _thinking_block(part: ThinkingPart) -> list[dict[str, Any]]:
    if part.redacted is not None:
        return [{"type": "redacted_thinking", "data": part.redacted}]
    if part.signature:
        return [{"type": "thinking", "thinking": part.text, "signature": part.signature}]
    return []


def _result_blocks(message: Message, wire_ids: list[str]) -> list[dict[str, Any]]:
    # ``repair`` put exactly one result per call, in call order, right after the call.
    results = [p for p in message.parts if isinstance(p, ToolResultPart)]
    blocks: list[dict[str, Any]] = []
    for wire_id, result in zip(wire_ids, results, strict=True):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": wire_id}
        if result.images:
            text = [{"type": "text", "text": result.content}] if result.content else []
            block["content"] = [*text, *(anthropic_image(i) for i in result.images)]
        elif result.content:
            block["content"] = result.content  # an empty text block is rejected: leave it out
        if result.is_error:
            block["is_error"] = True
        blocks.append(block)
    return blocks


class AnthropicBackend(HTTPBackend):
    """Streams from the Messages API; the key goes in ``x-api-key``."""

    profile = PROFILES["anthropic"]

    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}

    def headers(self) -> dict[str, str]:
        return {"anthropic-version": API_VERSION, **super().headers()}

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(
            request,
            model=self.model,
            backend=self.name,
            tool_format=self.tool_format,
            vision=self.vision,
        )


__all__ = [
    "API_VERSION",
    "CACHE_CONTROL",
    "MAX_BREAKPOINTS",
    "AnthropicBackend",
    "build_body",
    "mark_breakpoints",
]

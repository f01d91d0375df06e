"""OpenAI Responses API (``POST {base_url}/responses``, SSE with ``event:`` names).

The history becomes ``input`` items: messages, then a ``function_call`` item per call
and a ``function_call_output`` item per result, paired by ``call_id`` (each output right
after the calls of its turn, in call order; a failed result says so in its text, the
wire has no error flag). Requests are stateless: ``store: false``, the whole history
every turn, no ``previous_response_id``.

Reasoning goes back only to the backend that produced it, as the API gave it: the
decoder keeps each ``reasoning`` item whole (``id``, ``summary``, ``encrypted_content``)
as a redacted ``ThinkingPart``, and this builder puts it back in its place among the
turn's items. With ``request.thinking`` on, the body asks for ``reasoning`` (effort,
``summary: "auto"``) and ``include: ["reasoning.encrypted_content"]``, the only way a
stateless (``store: false``) request gets items it can send back. Reasoning without
an encrypted item (a summary alone) is never sent: it would have to be invented.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.backends._asks import responses_asks
from toolwire.backends._images import responses_image
from toolwire.backends._names import OPENAI, ToolNames
from toolwire.backends._prepare import prepare
from toolwire.backends._thinking import openai_effort
from toolwire.backends.base import ModelRequest
from toolwire.backends.http import HTTPBackend
from toolwire.backends.openai_chat import ERROR_PREFIX, parameters
from toolwire.config.choices import ToolFormat
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from toolwire.history.pairing import IdMap, arguments_json, own_thinking
from toolwire.providers import PROFILES


def build_body(
    request: ModelRequest,
    *,
    model: str,
    backend: str,
    tool_format: ToolFormat = "native",
    vision: bool = True,
) -> dict[str, Any]:
    """The Responses API body for ``request`` (``stream: true``, ``store: false``)."""
    native, history, system, names = prepare(request, OPENAI, tool_format, vision=vision)
    body: dict[str, Any] = {
        "model": model,
        "input": _items(history, names, backend),
        "stream": True,
        "store": False,
        "max_output_tokens": request.max_tokens,
    }
    if system:
        body["instructions"] = system
    if native and request.tools:
        body["tools"] = _tools(request, names)
    if native and request.web_search:
        body["tools"] = [*body.get("tools", ()), {"type": "web_search"}]
    body.update(responses_asks(request, names, native=native))
    if request.temperature is not None:
        body["temperature"] = request.temperature
    effort = openai_effort(request.thinking)
    if effort is not None:
        body["reasoning"] = {"effort": effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    return body


def _tools(request: ModelRequest, names: ToolNames) -> list[dict[str, Any]]:
    """The request's tools as Responses functions, under their wire names."""
    return [
        {
            "type": "function",
            "name": names.wire(t.name),
            "description": t.description,
            "parameters": parameters(t.input_schema),
            # Never strict: strict mode would require every property to be required
            # and refuses most MCP schemas; the API's default is strict, so say so.
            "strict": False,
        }
        for t in request.tools
    ]


def _items(history: list[Message], names: ToolNames, backend: str) -> list[dict[str, Any]]:
    ids = IdMap(64)
    wire_ids: list[str] = []
    items: list[dict[str, Any]] = []
    for message in history:
        if message.role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            for wire_id, result in zip(wire_ids, results, strict=True):
                items.append(
                    {"type": "function_call_output", "call_id": wire_id, "output": _output(result)}
                )
        elif message.role == "assistant":
            wire_ids = ids.turn(c.id for c in message.tool_calls())
            items.extend(_assistant_items(message, wire_ids, names, backend))
        else:
            items.extend(_user(message))
    return items


def _output(result: ToolResultPart) -> str | list[dict[str, Any]]:
    text = (ERROR_PREFIX if result.is_error else "") + result.content
    if not result.images:
        return text
    head = [{"type": "input_text", "text": text}] if text else []
    return [*head, *(responses_image(i) for i in result.images)]


def _user(message: Message) -> list[dict[str, Any]]:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
    if not any(isinstance(p, ImagePart) for p in message.parts):
        return [{"type": "message", "role": "user", "content": text}] if text else []
    content = [
        {"type": "input_text", "text": p.text} if isinstance(p, TextPart) else responses_image(p)
        for p in message.parts
        if isinstance(p, ImagePart) or (isinstance(p, TextPart) and p.text)
    ]
    return [{"type": "message", "role": "user", "content": content}]


def _assistant_items(
    message: Message, wire_ids: list[str], names: ToolNames, backend: str
) -> list[dict[str, Any]]:
    """Reasoning, text and calls in the order the model produced them."""
    items: list[dict[str, Any]] = []
    calls = iter(wire_ids)
    own = {id(p) for p in own_thinking(message, backend)}
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            item = reasoning_item(part) if id(part) in own else None
            if item is not None:
                items.append(item)
        elif isinstance(part, TextPart) and part.text:
            if items and items[-1]["type"] == "message":
                items[-1]["content"] += part.text
            else:
                items.append({"type": "message", "role": "assistant", "content": part.text})
        elif isinstance(part, ToolCallPart):
            items.append(
                {
                    "type": "function_call",
                    "call_id": next(calls),
                    "name": names.wire(part.name),
                    "arguments": arguments_json(part.arguments),
                }
            )
    return items


def reasoning_item(part: ThinkingPart) -> dict[str, Any] | None:
    """The ``reasoning`` input item a redacted part holds (``decode.openai_responses``
    stores it as JSON), or None when the part is not one."""
    if part.redacted is None:
        return None
    try:
        item = json.loads(part.redacted)
    except ValueError:
        return None
    ok = isinstance(item, dict) and item.get("type") == "reasoning"
    return item if ok and isinstance(item.get("encrypted_content"), str) else None


class OpenAIResponsesBackend(HTTPBackend):
    """Streams from the Responses API; the key as a bearer token."""

    profile = PROFILES["openai-responses"]

    def url(self) -> str:
        return f"{self.base_url}/responses"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return build_body(
            request,
            model=self.model,
            backend=self.name,
            tool_format=self.tool_format,
            vision=self.vision,
        )


__all__ = ["OpenAIResponsesBackend", "build_body", "reasoning_item"]

"""OpenAI Chat Completions (``POST {base_url}/chat/completions``, SSE).

The same API is served by OpenRouter, Ollama, vLLM, llama.cpp's server and LM Studio:
point ``base_url`` at their ``/v1``. Translation rules:

* each ``tool_calls`` id needs a ``role: tool`` message right after the assistant message
  (docs/design.md, "Provider rules a translation must keep"), one per call, in call
  order; OpenAI has no error flag, so a failed result says so in its text;
* ids: ``[A-Za-z0-9_-]``, at most 40 characters (OpenAI rejects longer ``tool_call_id``s);
* thinking: OpenAI's own Chat API never returns reasoning text, so a thinking part from
  this backend came from a server that streamed ``reasoning_content`` (DeepSeek, vLLM):
  it goes back in that field, which DeepSeek requires within a tool loop; other
  backends' thinking is dropped;
* ``stream_options.include_usage`` asks for the usage chunk at the end;
  ``max_completion_tokens`` for api.openai.com (its reasoning models reject
  ``max_tokens``), ``max_tokens`` for everyone else (local servers know only that one).
"""

from __future__ import annotations

from typing import Any

from toolwire.backends._asks import chat_asks
from toolwire.backends._images import chat_image
from toolwire.backends._names import OPENAI, ToolNames
from toolwire.backends._prepare import prepare
from toolwire.backends._schema import drop_patterns, fill_items, object_schema, with_properties
from toolwire.backends._thinking import openai_effort
from toolwire.backends.base import ModelRequest
from toolwire.backends.http import HTTPBackend
from toolwire.config.choices import ToolFormat
from toolwire.history import ImagePart, Message, TextPart, ToolResultPart
from toolwire.history.images import with_notes
from toolwire.history.pairing import IdMap, arguments_json, own_thinking
from toolwire.providers import PROFILES

OPENAI_BASE_URL = PROFILES["openai-chat"].default_url
ERROR_PREFIX = "Error: "  # how a failed result reads where the wire has no error flag
_FOLLOWS = "sent in the next user message"


def build_body(
    request: ModelRequest,
    *,
    model: str,
    backend: str,
    tool_format: ToolFormat = "native",
    official: bool = False,
    vision: bool = True,
) -> dict[str, Any]:
    """The Chat Completions body; ``official``: the server is api.openai.com."""
    native, history, system, names = prepare(request, OPENAI, tool_format, vision=vision)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages += _messages(history, backend, names)
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens" if official else "max_tokens": request.max_tokens,
    }
    if native and request.tools:
        body["tools"] = _tools(request, names, official=official)
    body.update(chat_asks(request, names, native=native))
    if request.temperature is not None:
        body["temperature"] = request.temperature
    effort = openai_effort(request.thinking)
    if effort is not None:
        body["reasoning_effort"] = effort
    return body


def _tools(request: ModelRequest, names: ToolNames, *, official: bool) -> list[dict[str, Any]]:
    """The request's tools as Chat Completions functions, under their wire names."""
    return [
        {
            "type": "function",
            "function": {
                "name": names.wire(t.name),
                "description": t.description,
                "parameters": parameters(t.input_schema, local=not official),
            },
        }
        for t in request.tools
    ]


def parameters(schema: dict[str, Any], *, local: bool = False) -> dict[str, Any]:
    """A tool's input schema as OpenAI accepts it (docs/backends.md, "Tool schemas").

    ``local``: a server other than api.openai.com, maybe llama.cpp, whose grammar builder
    fails on some regular expressions: patterns move into the description there.
    """
    out = fill_items(with_properties(object_schema(schema)))
    return drop_patterns(out) if local else out


def _messages(history: list[Message], backend: str, names: ToolNames) -> list[dict[str, Any]]:
    ids = IdMap(40)
    wire_ids: list[str] = []
    out: list[dict[str, Any]] = []
    for message in history:
        if message.role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            for wire_id, result in zip(wire_ids, results, strict=True):
                text = with_notes(result.content, result.images, _FOLLOWS)
                content = (ERROR_PREFIX if result.is_error else "") + text
                out.append({"role": "tool", "tool_call_id": wire_id, "content": content})
            out.extend(_result_images(results))
        elif message.role == "assistant":
            calls = message.tool_calls()
            wire_ids = ids.turn(c.id for c in calls)
            entry = _assistant(message, backend)
            if calls:
                entry["tool_calls"] = [
                    {
                        "id": wire_id,
                        "type": "function",
                        "function": {
                            "name": names.wire(c.name),
                            "arguments": arguments_json(c.arguments),
                        },
                    }
                    for wire_id, c in zip(wire_ids, calls, strict=True)
                ]
            if entry.get("content") or calls:
                out.append(entry)
        else:
            out.extend(_user(message))
    return out


def _user(message: Message) -> list[dict[str, Any]]:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
    if not any(isinstance(p, ImagePart) for p in message.parts):
        return [{"role": "user", "content": text}] if text else []
    content = [
        {"type": "text", "text": p.text} if isinstance(p, TextPart) else chat_image(p)
        for p in message.parts
        if isinstance(p, ImagePart) or (isinstance(p, TextPart) and p.text)
    ]
    return [{"role": "user", "content": content}]


def _result_images(results: list[ToolResultPart]) -> list[dict[str, Any]]:
    """A ``tool`` message holds text only: the results' images follow as a user message."""
    content: list[dict[str, Any]] = []
    for result in results:
        if result.images:
            content.append({"type": "text", "text": f"Images from the {result.name} result:"})
            content.extend(chat_image(i) for i in result.images)
    return [{"role": "user", "content": content}] if content else []


def _assistant(message: Message, backend: str) -> dict[str, Any]:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
    # ``content: null`` is how OpenAI itself writes an assistant turn that only calls tools.
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    reasoning = "".join(p.text for p in own_thinking(message, backend))
    if reasoning:
        entry["reasoning_content"] = reasoning
    return entry


class OpenAIChatBackend(HTTPBackend):
    """Streams from a Chat Completions endpoint; the key, if any, as a bearer token."""

    profile = PROFILES["openai-chat"]

    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        official = self.base_url.startswith(OPENAI_BASE_URL)
        return build_body(
            request,
            model=self.model,
            backend=self.name,
            tool_format=self.tool_format,
            official=official,
            vision=self.vision,
        )


__all__ = ["OPENAI_BASE_URL", "OpenAIChatBackend", "build_body", "parameters"]

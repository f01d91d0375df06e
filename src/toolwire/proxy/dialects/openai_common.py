"""What the two OpenAI dialects share: the error shape, the session a client names, the
planner's body, images, function tools, arguments, usage and stop reasons."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from toolwire.context import prompt_tokens
from toolwire.events import MessageEnd
from toolwire.proxy.dialects.base import DialectError, Payload
from toolwire.proxy.errors import ProxyError, UpstreamError
from toolwire.proxy.relay import Answering, json_bytes
from toolwire.proxy.state import MAX_SESSION_ID, SESSION_HEADERS
from toolwire.proxy.translate import EFFORT_KEY, MAX_OUTPUT_TOKENS

# Anthropic's error type (what every ProxyError carries) -> OpenAI's type and code.
_ERRORS: dict[str, tuple[str, str | None]] = {
    "invalid_request_error": ("invalid_request_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "permission_error": ("invalid_request_error", "insufficient_permissions"),
    "not_found_error": ("invalid_request_error", "not_found"),
    "request_too_large": ("invalid_request_error", "request_too_large"),
    "timeout_error": ("invalid_request_error", "timeout"),
    "rate_limit_error": ("requests", "rate_limit_exceeded"),
    "overloaded_error": ("server_error", "overloaded"),
    "api_error": ("server_error", None),
}
# What Codex and opencode send to name a conversation, after ``prompt_cache_key``.
_SESSION_HEADERS = ("session_id", "conversation_id", "x-session-id", *SESSION_HEADERS)
_STOPS = {"tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}


def error_body(exc: ProxyError) -> Payload:
    """OpenAI's error shape: ``{"error": {"message", "type", "code", "param"}}``."""
    kind, code = _ERRORS.get(exc.kind, ("server_error", None))
    if exc.status < 500 and kind == "server_error":
        kind = "invalid_request_error"
    if isinstance(exc, DialectError | UpstreamError) and exc.code:
        code = exc.code
    param = exc.param if isinstance(exc, DialectError) else None
    return {"error": {"message": exc.message, "type": kind, "code": code, "param": param}}


def session(body: Mapping[str, Any], headers: Mapping[str, str], first: Any) -> str:
    """The session a client names: ``prompt_cache_key``, else a session header, else a
    digest of its first message (the same on every request of one conversation)."""
    named = body.get("prompt_cache_key")
    if not isinstance(named, str) or not named:
        named = next((headers[h] for h in _SESSION_HEADERS if headers.get(h)), "")
    if named and len(named) <= MAX_SESSION_ID and named.isascii() and named.isprintable():
        return named
    if isinstance(first, dict):  # its content: the same however the item is spelled
        first = first.get("content")
    seed = named or json.dumps(first, sort_keys=True, ensure_ascii=False)
    return "first-" + hashlib.sha256(seed.encode(errors="replace")).hexdigest()[:32]


def planner_body(
    body: Mapping[str, Any],
    sid: str,
    *,
    system: str,
    messages: list[Payload],
    tools: list[Payload],
    max_tokens: Any,
) -> Payload:
    """The request in the planner's form (Anthropic Messages), named for session ``sid``."""
    if not messages:
        raise DialectError("the request holds no message", "messages")
    tokens = MAX_OUTPUT_TOKENS if max_tokens is None else max_tokens
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
        raise DialectError("the most output tokens must be a positive integer", "max_tokens")
    out: Payload = {
        "model": body["model"],
        "system": system,
        "messages": messages,
        "tools": tools,
        "max_tokens": tokens,
        "stream": bool(body.get("stream")),
        "metadata": {"user_id": json.dumps({"session_id": sid})},
    }
    if isinstance(body.get("temperature"), int | float):
        out["temperature"] = body["temperature"]
    return out


def append(out: list[Payload], role: str, blocks: list[Payload]) -> None:
    """Consecutive messages of one role are one planner message (tool results first)."""
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"] = out[-1]["content"] + blocks
    else:
        out.append({"role": role, "content": blocks})


def with_effort(out: Payload, effort: Any) -> Payload:
    """``out`` asking for ``effort`` (``reasoning.effort``) when the client set one."""
    if isinstance(effort, str) and effort:
        out[EFFORT_KEY] = effort
    return out


def need_model(body: Any) -> Mapping[str, Any]:
    """``body`` when it is an object naming a model; ``DialectError`` otherwise."""
    if not isinstance(body, dict):
        raise DialectError("the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise DialectError("model: a non-empty string is required", "model")
    return body


def image_block(url: Any, param: str) -> Payload:
    """An image (a ``data:`` URL or a web address) as the planner's image block."""
    if not isinstance(url, str) or not url:
        raise DialectError("an image needs a URL", param)
    if url.startswith("data:"):
        head, _, data = url[5:].partition(",")
        media_type, _, encoding = head.partition(";")
        if encoding != "base64" or not data:
            raise DialectError("an image data URL must be base64", param)
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def function_tool(name: Any, description: Any, parameters: Any, param: str) -> Payload:
    """A function tool as the planner's tool."""
    if not isinstance(name, str) or not name:
        raise DialectError("a function tool needs a name", param)
    schema = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    return {"name": name, "description": str(description or ""), "input_schema": schema}


def arguments(text: Any, param: str) -> Any:
    """A call's arguments (JSON text) as an object."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError as e:
        raise DialectError(f"the call's arguments are not JSON: {e}", param) from e


def arguments_text(value: Any) -> str:
    """A call's arguments as the JSON text a client reads."""
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def content_text(content: Any) -> str:
    """A tool output or message content (text or a list of text parts) as text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    texts = [p.get("text") for p in content if isinstance(p, dict)]
    return "".join(t for t in texts if isinstance(t, str))


def sse(payload: Payload, event: str | None = None) -> bytes:
    """One SSE event: ``data:`` (Chat Completions), or named ``event`` (Responses)."""
    head = b"" if event is None else b"event: " + event.encode() + b"\n"
    return head + b"data: " + json_bytes(payload) + b"\n\n"


def finish_reason(end: MessageEnd, *, saw_calls: bool) -> str:
    """Chat Completions' ``finish_reason`` of how the answer ended."""
    reason = _STOPS.get(end.stop_reason, "stop")
    return "stop" if reason == "tool_calls" and not saw_calls else reason


def tokens(end: MessageEnd | None, answering: Answering) -> tuple[int, int, int, int]:
    """(input, output, cached, reasoning) tokens of the answer: input as OpenAI counts
    it (cache reads and writes included, whatever the backend's own count holds) and
    scaled to the client's window (``scale.py``); the estimate when none was reported."""
    usage = None if end is None else end.usage
    given = answering.estimate
    if usage is not None and usage.input_tokens is not None:
        given = prompt_tokens(usage, answering.wire_format)
    if answering.scale is not None:
        given = answering.scale(given)
    if usage is None:
        return given, 0, 0, 0
    cached = usage.cache_read_tokens or 0
    return given, usage.output_tokens or 0, cached, usage.reasoning_tokens or 0


__all__ = [
    "append",
    "arguments",
    "arguments_text",
    "content_text",
    "error_body",
    "finish_reason",
    "function_tool",
    "image_block",
    "need_model",
    "planner_body",
    "session",
    "sse",
    "tokens",
    "with_effort",
]

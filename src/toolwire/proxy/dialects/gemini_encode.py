"""Normalized events -> Gemini ``GenerateContentResponse`` chunks, as they arrive.

Each text or thought delta is one chunk; a function call is one chunk the moment its
arguments are complete (Gemini sends calls whole, so none is cut in pieces), with the
call's ``thoughtSignature`` on its part; a signature that came alone goes on an empty
part, a thought one when it closes a thought (``gemini_import`` reads both back). The
last chunk carries ``finishReason`` and ``usageMetadata``; an upstream failure mid-stream
is a chunk in Google's error shape. ``result`` folds the chunks into one response.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from toolwire.backends import encodable
from toolwire.context import prompt_tokens
from toolwire.events import (
    Event,
    MessageEnd,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolwire.proxy.relay import Answering

Payload = dict[str, Any]
_FINISH = {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}  # else STOP
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_string = json.encoder.encode_basestring


class GeminiEncoder:
    """One response's encoder (``dialects.base.Encoder``): its SSE chunks, or with
    ``result`` the whole response."""

    def __init__(self, answering: Answering) -> None:
        self.model = answering.model
        self._answering = answering
        self.response_id = uuid.uuid4().hex
        self._calls: dict[str, tuple[str, str | None]] = {}  # id -> name, signature
        self._thought = False  # the last part sent was thought text
        self._parts: list[Payload] = []
        self._last: Payload | None = None  # the chunk with finishReason and usage
        self.done = self.stopped = False
        self.failure: str | None = None
        tail = f',"modelVersion":{_string(self.model)},"responseId":"{self.response_id}"}}\n\n'
        self._text = (
            b'data: {"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"},'
            b'"index":0}]' + tail.replace("%", "%%").encode()
        )

    def start(self) -> bytes:
        return b""  # Gemini's stream has no opening event

    def feed(self, event: Event) -> bytes:
        """The SSE bytes of the chunks ``event`` completes; a text delta straight from a
        template (the hot path)."""
        if type(event) is TextDelta and event.text and not self.done:
            try:
                framed = self._text % _string(event.text).encode()
            except UnicodeEncodeError:  # a lone surrogate: the slow path makes it U+FFFD
                return b"".join(sse_bytes(p) for p in self.chunks(event))
            self._thought = False
            self._parts.append({"text": event.text})
            return framed
        return b"".join(sse_bytes(p) for p in self.chunks(event))

    def result(self) -> Payload:
        """The whole response: the parts sent, joined (``folded``), then the last chunk's
        finish and usage."""
        parts: list[Payload] = []
        for part in self._parts:
            _join(parts, part)
        whole = self._last or self._chunk([])
        candidate = dict(whole["candidates"][0], content={"parts": parts, "role": "model"})
        return whole | {"candidates": [candidate]}

    def chunks(self, event: Event) -> list[Payload]:
        """The chunks ``event`` completes (none after the response ended)."""
        if self.done:
            return []
        parts: list[Payload] = []
        if isinstance(event, TextDelta) and event.text:
            parts.append({"text": event.text})
        elif isinstance(event, ThinkingDelta):
            parts.extend(self._thinking(event))
        elif isinstance(event, ToolCallStart | ToolCallDelta | ToolCallEnd):
            parts.extend(self._call(event))
        elif isinstance(event, StreamError):
            self.failure, self.done = event.message, True
            return [error_body(500, event.message)]
        elif isinstance(event, MessageEnd):
            return self._end(event)
        if not parts:
            return []
        self._thought = bool(parts[-1].get("thought"))
        self._parts += parts
        return [self._chunk(parts)]

    def _thinking(self, event: ThinkingDelta) -> list[Payload]:
        if event.redacted is not None:
            return []  # Anthropic's redacted thinking has no Gemini form
        part: Payload = {"text": event.text}
        if event.text or self._thought:
            part["thought"] = True
        if event.signature:
            part["thoughtSignature"] = event.signature
        return [part] if event.text or event.signature else []

    def _call(self, event: ToolCallStart | ToolCallDelta | ToolCallEnd) -> list[Payload]:
        if isinstance(event, ToolCallStart):
            if not event.server:  # a call the proxy runs itself is not the client's
                self._calls[event.id] = (event.name, event.signature)
            return []
        known = self._calls.get(event.id)
        if not isinstance(event, ToolCallEnd) or known is None:
            return []  # arguments are sent whole, from the end event
        name, signature = known
        args = event.arguments if event.ok and isinstance(event.arguments, dict) else {}
        part: Payload = {"functionCall": {"id": event.id, "name": name, "args": args}}
        if signature:
            part["thoughtSignature"] = signature
        return [part]

    def _end(self, event: MessageEnd) -> list[Payload]:
        self.done = True
        if event.stop_reason == "error":
            return []  # the StreamError before it already ended the response
        self.stopped = True
        usage = event.usage
        prompt = self._answering.estimate
        # Not scaled (``Answering.scale``): Gemini clients measure their own model's window.
        if usage is not None and usage.input_tokens is not None:
            prompt = prompt_tokens(usage, self._answering.wire_format)
        output = usage.output_tokens or 0 if usage is not None else 0
        thoughts = usage.reasoning_tokens or 0 if usage is not None else 0
        meta: Payload = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": max(output - thoughts, 0),
            "totalTokenCount": prompt + output,
        }
        if thoughts:
            meta["thoughtsTokenCount"] = thoughts
        chunk = self._chunk([{"text": ""}], _FINISH.get(event.stop_reason, "STOP"))
        chunk["usageMetadata"] = meta
        self._last = chunk
        return [chunk]

    def _chunk(self, parts: list[Payload], finish: str | None = None) -> Payload:
        candidate: Payload = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        return {
            "candidates": [candidate],
            "modelVersion": self.model,
            "responseId": self.response_id,
        }


def _join(parts: list[Payload], part: Payload) -> None:
    if "text" not in part:
        parts.append(part)
        return
    last = parts[-1] if parts else None
    joinable = (
        last is not None
        and "text" in last
        and "thoughtSignature" not in last
        and bool(last.get("thought")) == bool(part.get("thought"))
    )
    if joinable and last is not None:
        parts[-1] = {**part, "text": last["text"] + part["text"]}
    elif part["text"] or "thoughtSignature" in part:
        parts.append(dict(part))


_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}


def error_body(status: int, message: str) -> Payload:
    """Google's error shape: ``{"error": {"code", "message", "status"}}`` (the kind is
    named by the status alone)."""
    name = _STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": status, "message": message, "status": name}}


def sse_bytes(payload: Payload) -> bytes:
    """One chunk framed as an SSE ``data`` event."""
    text = f"data: {_JSON.encode(payload)}\n\n"
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate in the upstream's text
        return encodable(text).encode()


__all__ = ["GeminiEncoder", "error_body", "sse_bytes"]

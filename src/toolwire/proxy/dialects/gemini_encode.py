"""Normalized events -> Gemini ``GenerateContentResponse`` chunks, as they arrive.

Each text or thought delta is one chunk; a function call is one chunk the moment its
arguments are complete (Gemini sends calls whole, so none is cut in pieces), with the
call's ``thoughtSignature`` on its part; a signature that came alone goes on an empty
part, a thought one when it closes a thought (``gemini_import`` reads both back). The
last chunk carries ``finishReason`` and ``usageMetadata``; an upstream failure mid-stream
is a chunk in Google's error shape. ``collect`` folds the chunks into one response.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from starlette.responses import Response

from toolwire.backends import encodable
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
from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.relay import relay
from toolwire.proxy.upstream import Opened

Payload = dict[str, Any]
_FINISH = {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}  # else STOP
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_string = json.encoder.encode_basestring


class GeminiEncoder:
    """One response's encoder: ``feed(event)`` for each event (``relay.StreamEncoder``)."""

    def __init__(self, model: str, *, input_tokens: int) -> None:
        self.model = model
        self.input_tokens = input_tokens
        self.response_id = uuid.uuid4().hex
        self._calls: dict[str, tuple[str, str | None]] = {}  # id -> name, signature
        self._thought = False  # the last part sent was thought text
        self.done = False
        self.stopped = False
        tail = f',"modelVersion":{_string(model)},"responseId":"{self.response_id}"}}\n\n'
        self._text = (
            b'data: {"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"},'
            b'"index":0}]' + tail.replace("%", "%%").encode()
        )

    def start_sse(self) -> bytes:
        return b""  # Gemini's stream has no opening event

    def feed_sse(self, event: Event) -> bytes:
        """``feed(event)`` framed as SSE; a text delta straight from a template."""
        if type(event) is TextDelta and event.text and not self.done:
            self._thought = False
            return self._text % _string(event.text).encode()
        return b"".join(sse_bytes(p) for p in self.feed(event))

    def feed(self, event: Event) -> list[Payload]:
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
            self.done = True
            return [error_body(500, "api_error", event.message)]
        elif isinstance(event, MessageEnd):
            return self._end(event)
        if not parts:
            return []
        self._thought = bool(parts[-1].get("thought"))
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
        prompt = self.input_tokens
        if usage is not None and usage.input_tokens is not None:
            prompt = usage.input_tokens
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


class GeminiRelay:
    """The answer as Gemini's SSE stream or one ``GenerateContentResponse``."""

    tap = None

    def __init__(self, model: str, input_tokens: int) -> None:
        self._model, self._input_tokens = model, input_tokens

    def stream(self, opened: Opened, metrics: Metrics, headers: dict[str, str]) -> Response:
        encoder = GeminiEncoder(self._model, input_tokens=self._input_tokens)
        return EventStreamResponse(
            relay(encoder, opened, metrics), {"cache-control": "no-cache", **headers}
        )

    async def collect(self, opened: Opened) -> Payload:
        encoder = GeminiEncoder(self._model, input_tokens=self._input_tokens)
        chunks = list(encoder.feed(opened.first))
        try:
            async for event in opened.rest:
                chunks += encoder.feed(event)
        finally:
            await opened.rest.aclose()
        for chunk in chunks:
            if "error" in chunk:
                raise UpstreamError(500, "api_error", chunk["error"]["message"])
        return folded(chunks)


def folded(chunks: list[Payload]) -> Payload:
    """One response of streamed ``chunks``: their parts in order, adjacent text (or
    thought) pieces joined until a signature closes one; the last chunk's finish and usage."""
    if not chunks:
        return {"candidates": []}
    parts: list[Payload] = []
    for chunk in chunks:
        for part in chunk["candidates"][0]["content"]["parts"]:
            _join(parts, part)
    whole = dict(chunks[-1])
    candidate = dict(whole["candidates"][0], content={"parts": parts, "role": "model"})
    whole["candidates"] = [candidate]
    return whole


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


def error_body(status: int, kind: str, message: str) -> Payload:
    """Google's error shape: ``{"error": {"code", "message", "status"}}``."""
    del kind  # Google names the kind by status alone
    name = _STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": status, "message": message, "status": name}}


def sse_bytes(payload: Payload) -> bytes:
    """One chunk framed as an SSE ``data`` event."""
    text = f"data: {_JSON.encode(payload)}\n\n"
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate in the upstream's text
        return encodable(text).encode()


__all__ = ["GeminiEncoder", "GeminiRelay", "error_body", "folded", "sse_bytes"]

"""Normalized events -> Anthropic Messages stream events, as they arrive.

``AnthropicEncoder`` turns each ``toolwire.events`` event into zero or more Anthropic
stream payloads (``message_start``, ``content_block_start``/``delta``/``stop``,
``message_delta``, ``message_stop``, or ``error``); ``sse_bytes`` frames one for the
wire and ``accumulate`` folds them into the non-streaming response body. Rules
(docs/proxy.md, "Other backends: translation"): a ``tool_use`` block opens the moment
the upstream names the tool, its input travels only as ``input_json_delta``, a
signature is forwarded only when the upstream sent one (never invented), and
``stop_reason: tool_use`` only follows a tool_use block.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

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
from toolwire.proxy.scale import Scale

Payload = dict[str, Any]


class AnthropicEncoder:
    """One response's encoder: ``start()``, then ``feed(event)`` for each event."""

    def __init__(
        self,
        model: str,
        *,
        input_tokens: int = 0,
        json_args: bool = True,
        scale: Scale | None = None,
    ) -> None:
        """``json_args``: argument pieces are JSON text (false for tag-format tool calls,
        whose parsed arguments are then sent whole when the call ends); ``scale``: input
        tokens are reported as a share of the client's window (``scale.py``)."""
        self.model = model
        self._json_args = json_args
        self._scale = scale
        self.input_tokens = input_tokens if scale is None else scale(input_tokens)
        self._index = -1
        self._open: str | None = None  # kind of the open block: text, thinking, tool_use
        self._open_call: str | None = None
        self._server: str | None = None  # the name of the open server_tool_use block's tool
        self._saw_tool = False
        self.searches = 0
        """Server-run web searches answered with results (``usage.server_tool_use``)."""
        # Calls that started while another tool_use block was open: Anthropic blocks do not
        # interleave, so their events wait (in order) until the open block ends.
        self._queued: dict[str, list[Event]] = {}
        self.done = False
        """True once the response ended (``message_stop`` or ``error`` was produced)."""
        self.stopped = False
        """True once ``message_stop`` was produced: the response ended normally."""

    def start(self) -> Payload:
        """The ``message_start`` payload (usage as far as known before the answer)."""
        message: Payload = {
            "id": f"msg_{uuid.uuid4().hex}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 0},
        }
        return {"type": "message_start", "message": message}

    def feed(self, event: Event) -> list[Payload]:
        """The Anthropic payloads ``event`` completes (none after the message ended)."""
        if self.done:
            return []
        out: list[Payload] = []
        if self._queue(event):
            return out
        if isinstance(event, TextDelta):
            if event.text:
                self._ensure(out, "text", {"type": "text", "text": ""})
                out.append(self._delta({"type": "text_delta", "text": event.text}))
        elif isinstance(event, ThinkingDelta):
            self._thinking(event, out)
        elif isinstance(event, ToolCallStart | ToolCallDelta | ToolCallEnd):
            self._tool(event, out)
        elif isinstance(event, StreamError):
            out.append(error_payload("api_error", event.message))
            self.done = True
        elif isinstance(event, MessageEnd):
            self._end(event, out)
        return out

    def feed_sse(self, event: Event) -> bytes:
        """``feed(event)`` framed for the wire: the same bytes as ``sse_bytes`` of each.

        The relay's hot path: a text delta inside an open text block (nearly every event
        of a long answer) is framed straight from a template, without building payloads.
        """
        if self._open == "text" and type(event) is TextDelta and event.text and not self.done:
            return _TEXT_DELTA % (self._index, _json_string(event.text).encode())
        return b"".join([sse_bytes(p) for p in self.feed(event)])

    def _tool(self, event: ToolCallStart | ToolCallDelta | ToolCallEnd, out: list[Payload]) -> None:
        if isinstance(event, ToolCallStart):
            self._close(out)
            kind = "server_tool_use" if event.server else "tool_use"
            self._saw_tool = self._saw_tool or not event.server
            block = {"type": kind, "id": event.id, "name": event.name, "input": {}}
            self._open_block(out, kind, block)
            self._open_call = event.id
            self._server = event.name if event.server else None
        elif event.id != self._open_call:
            return  # a call whose block already closed (see _queue for those that wait)
        elif isinstance(event, ToolCallDelta):
            if event.text and self._json_args:
                out.append(self._delta({"type": "input_json_delta", "partial_json": event.text}))
        else:
            if not self._json_args and event.ok:
                whole = json.dumps(event.arguments, ensure_ascii=False)
                out.append(self._delta({"type": "input_json_delta", "partial_json": whole}))
            server = self._server
            self._close(out)
            if server is not None and event.result is not None:
                self._server_result(server, event, out)
            self._flush(out)

    def _server_result(self, name: str, event: ToolCallEnd, out: list[Payload]) -> None:
        """A server-run call's result block (``web_search_tool_result``), sent whole."""
        if name == "web_search" and isinstance(event.result, list):
            self.searches += 1
        block = {"type": f"{name}_tool_result", "tool_use_id": event.id, "content": event.result}
        self._open_block(out, "server_result", block)
        self._close(out)

    def _queue(self, event: Event) -> bool:
        """Hold ``event`` back if it belongs to a call waiting for the open block to end."""
        call = getattr(event, "id", None) if event.type.startswith("tool_call") else None
        if call is None:
            return False
        if isinstance(event, ToolCallStart) and self._open in ("tool_use", "server_tool_use"):
            self._queued[event.id] = [event]
            return True
        if call in self._queued:
            self._queued[call].append(event)
            return True
        return False

    def _flush(self, out: list[Payload]) -> None:
        """Replay waiting calls, one block each, until one is left open (still streaming)."""
        while self._queued and self._open is None:
            call = next(iter(self._queued))
            for event in self._queued.pop(call):
                out.extend(self.feed(event))

    def _thinking(self, event: ThinkingDelta, out: list[Payload]) -> None:
        if event.redacted is not None:
            self._close(out)
            self._open_block(out, "redacted", {"type": "redacted_thinking", "data": event.redacted})
            self._close(out)
            return
        self._ensure(out, "thinking", {"type": "thinking", "thinking": "", "signature": ""})
        if event.text:
            out.append(self._delta({"type": "thinking_delta", "thinking": event.text}))
        if event.signature:
            out.append(self._delta({"type": "signature_delta", "signature": event.signature}))

    def _end(self, event: MessageEnd, out: list[Payload]) -> None:
        self._close(out)
        while self._queued:
            self._flush(out)
            self._close(out)
        reason: str = event.stop_reason
        if reason == "error":
            return  # the StreamError before it already ended the response
        if reason == "tool_use" and not self._saw_tool:
            reason = "end_turn"
        usage = event.usage
        output_tokens = usage.output_tokens if usage and usage.output_tokens else 0
        delta_usage: Payload = {"output_tokens": output_tokens}
        if usage and usage.input_tokens is not None:
            tokens = usage.input_tokens
            delta_usage["input_tokens"] = tokens if self._scale is None else self._scale(tokens)
        if self.searches:
            server = {"web_search_requests": self.searches, "web_fetch_requests": 0}
            delta_usage["server_tool_use"] = server
        out.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": delta_usage,
            }
        )
        out.append({"type": "message_stop"})
        self.done = self.stopped = True

    def _ensure(self, out: list[Payload], kind: str, block: Payload) -> None:
        if self._open != kind:
            self._close(out)
            self._open_block(out, kind, block)

    def _open_block(self, out: list[Payload], kind: str, block: Payload) -> None:
        self._index += 1
        self._open = kind
        out.append({"type": "content_block_start", "index": self._index, "content_block": block})

    def _close(self, out: list[Payload]) -> None:
        if self._open is not None:
            out.append({"type": "content_block_stop", "index": self._index})
            self._open = None
            self._open_call = None
            self._server = None

    def _delta(self, delta: Payload) -> Payload:
        return {"type": "content_block_delta", "index": self._index, "delta": delta}


def error_payload(kind: str, message: str) -> Payload:
    """Anthropic's error shape (also the body of an error response)."""
    return {"type": "error", "error": {"type": kind, "message": message}}


# ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` builds an encoder per
# call; one made once encodes the same way.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_json_string = json.encoder.encode_basestring  # what _JSON does to a str, no escapes to ASCII
_TEXT_DELTA = (
    b"event: content_block_delta\ndata: "
    b'{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}\n\n'
)


def sse_bytes(payload: Payload) -> bytes:
    """One payload framed as an SSE event named after its type."""
    text = f"event: {payload['type']}\ndata: {_JSON.encode(payload)}\n\n"
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate in the upstream's text: never on the fast path
        return encodable(text).encode()


def accumulate(payloads: list[Payload]) -> Payload:
    """The non-streaming response body the stream ``payloads`` describe."""
    message: Payload = {}
    partial: dict[int, str] = {}
    for p in payloads:
        kind = p["type"]
        if kind == "message_start":
            message = dict(p["message"], content=[])
        elif kind == "content_block_start":
            message["content"].append(dict(p["content_block"]))
        elif kind == "content_block_delta":
            _apply_delta(message["content"][p["index"]], p["delta"], partial, p["index"])
        elif kind == "content_block_stop" and p["index"] in partial:
            text = partial.pop(p["index"])
            message["content"][p["index"]]["input"] = json.loads(text) if text else {}
        elif kind == "message_delta":
            message.update(p["delta"])
            message["usage"] = dict(message["usage"], **p["usage"])
    return message


def _apply_delta(block: Payload, delta: Payload, partial: dict[int, str], index: int) -> None:
    kind = delta["type"]
    if kind == "text_delta":
        block["text"] += delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] += delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "input_json_delta":
        partial[index] = partial.get(index, "") + delta["partial_json"]


__all__ = ["AnthropicEncoder", "Payload", "accumulate", "error_payload", "sse_bytes"]

"""Normalized events -> the OpenAI Responses stream (and the whole ``response`` object).

Events, in the order a Responses client reads them: ``response.created`` and
``response.in_progress``; per output item ``response.output_item.added``, its deltas
(``response.output_text.delta`` inside a ``content_part``,
``response.reasoning_summary_text.delta``, ``response.function_call_arguments.delta``,
``response.custom_tool_call_input.delta``) and ``response.output_item.done``; then
``response.completed`` (``response.incomplete`` when the output limit cut it) with the
usage, or ``response.failed``. A function call's item, with its name, is added the moment
the upstream names the tool. Reasoning keeps the upstream's signature or opaque item in
``encrypted_content`` (``reasoning_secret``) so the next request gives it back as it was.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

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
from toolwire.proxy.dialects.base import Payload
from toolwire.proxy.dialects.openai_common import arguments_text, sse, tokens
from toolwire.proxy.relay import Answering

SECRET_KEY = "toolwire"  # marks an ``encrypted_content`` this proxy wrote
# Stop reasons that end a response ``incomplete``, and the reason it then names.
_INCOMPLETE = {"max_tokens": "max_output_tokens", "refusal": "content_filter"}


def reasoning_secret(kind: str, value: str) -> str:
    """The ``encrypted_content`` carrying a thinking ``signature`` or ``redacted`` payload."""
    return json.dumps({SECRET_KEY: kind, "value": value}, separators=(",", ":"))


_string = json.encoder.encode_basestring  # a str as JSON, not escaped to ASCII
_TEXT_DELTA = (
    b"event: response.output_text.delta\ndata: "
    b'{"type":"response.output_text.delta","sequence_number":%d,"item_id":"%s",'
    b'"output_index":%d,"content_index":0,"delta":%s,"logprobs":[]}\n\n'
)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


class ResponsesEncoder:
    """One answer as Responses events; ``base``: the response object's fixed fields
    (id, model, the request's settings), ``custom``: the names of freeform tools."""

    def __init__(self, base: Payload, custom: frozenset[str], answering: Answering) -> None:
        self._base = base | {"object": "response", "created_at": int(time.time())}
        self._custom, self._answering = custom, answering
        self._json_args = answering.json_args
        self.done = self.stopped = False
        self.failure: str | None = None
        self._seq = 0
        self._output: list[Payload] = []
        self._text: int | None = None  # output index of the open message item
        self._thinking: int | None = None  # of the open reasoning item
        self._calls: dict[str, int] = {}
        # The growing text of each open item (its text, summary or arguments), joined when
        # the item ends: adding to a str in a dict would copy it at every delta.
        self._pieces: dict[int, list[str]] = {}
        self._final: Payload | None = None

    def _emit(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return sse(payload, kind)

    def _response(self, status: str, **fields: Any) -> Payload:
        extra = {"error": None, "incomplete_details": None, "usage": None}
        return self._base | extra | {"status": status, "output": self._output} | fields

    def start(self) -> bytes:
        created = self._response("in_progress", output=[])
        return self._emit("response.created", response=created) + self._emit(
            "response.in_progress", response=created
        )

    def feed(self, event: Event) -> bytes:
        if self.done:
            return b""
        if isinstance(event, TextDelta) and event.text:
            return self._open_text() + self._text_delta(event.text)
        if isinstance(event, ThinkingDelta):
            return self._reasoning(event)
        if isinstance(event, ToolCallStart) and not event.server:
            return self._close_text() + self._close_thinking() + self._call_start(event)
        if isinstance(event, ToolCallDelta) and event.id in self._calls:
            return self._call_delta(event)
        if isinstance(event, ToolCallEnd) and event.id in self._calls:
            return self._call_end(event)
        if isinstance(event, StreamError):
            return self._failed(event.message)
        if isinstance(event, MessageEnd):
            return self._ended(event)
        return b""

    def _add(self, item: Payload) -> tuple[int, bytes]:
        self._output.append(item)
        index = len(self._output) - 1
        return index, self._emit("response.output_item.added", output_index=index, item=item)

    def _item_done(self, index: int) -> bytes:
        item = self._output[index]
        if "status" in item:
            item["status"] = "completed"
        return self._emit("response.output_item.done", output_index=index, item=item)

    def _open_text(self) -> bytes:
        if self._text is not None:
            return b""
        out = self._close_thinking()
        item = {"type": "message", "id": _new_id("msg"), "status": "in_progress"}
        index, added = self._add(item | {"role": "assistant", "content": []})
        part = {"type": "output_text", "text": "", "annotations": []}
        self._output[index]["content"].append(part)
        self._text = index
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        return out + added + self._emit("response.content_part.added", **where, part=dict(part))

    def _text_delta(self, text: str) -> bytes:
        """The hot path (nearly every event of a long answer), framed from a template."""
        assert self._text is not None
        self._pieces.setdefault(self._text, []).append(text)
        item_id = self._output[self._text]["id"]
        try:
            framed = _TEXT_DELTA % (self._seq, item_id.encode(), self._text, _string(text).encode())
        except UnicodeEncodeError:  # a lone surrogate in the upstream's text: the slow path
            where = {"item_id": item_id, "output_index": self._text, "content_index": 0}
            return self._emit("response.output_text.delta", **where, delta=text, logprobs=[])
        self._seq += 1
        return framed

    def _joined(self, index: int) -> str:
        return "".join(self._pieces.pop(index, ()))

    def _close_text(self) -> bytes:
        index, self._text = self._text, None
        if index is None:
            return b""
        item = self._output[index]
        part = item["content"][0]
        part["text"] = self._joined(index)
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        done = self._emit("response.output_text.done", **where, text=part["text"], logprobs=[])
        done += self._emit("response.content_part.done", **where, part=part)
        return done + self._item_done(index)

    def _reasoning(self, event: ThinkingDelta) -> bytes:
        if event.redacted is not None:
            out = self._close_text() + self._close_thinking()
            secret = reasoning_secret("redacted", event.redacted)
            item: Payload = {"type": "reasoning", "id": _new_id("rs"), "summary": []}
            index, added = self._add(item | {"encrypted_content": secret})
            return out + added + self._item_done(index)
        out = self._open_thinking() if event.text or event.signature else b""
        if self._thinking is None:
            return out
        item = self._output[self._thinking]
        if event.signature:
            item["encrypted_content"] = reasoning_secret("signature", event.signature)
        if not event.text:
            return out
        self._pieces.setdefault(self._thinking, []).append(event.text)
        return out + self._emit(
            "response.reasoning_summary_text.delta",
            item_id=item["id"],
            output_index=self._thinking,
            summary_index=0,
            delta=event.text,
        )

    def _open_thinking(self) -> bytes:
        if self._thinking is not None:
            return b""
        out = self._close_text()
        part = {"type": "summary_text", "text": ""}
        item = {"type": "reasoning", "id": _new_id("rs"), "summary": [part]}
        index, added = self._add(item)
        self._thinking = index
        where = {"item_id": item["id"], "output_index": index, "summary_index": 0}
        return (
            out
            + added
            + self._emit("response.reasoning_summary_part.added", **where, part=dict(part))
        )

    def _close_thinking(self) -> bytes:
        index, self._thinking = self._thinking, None
        if index is None:
            return b""
        item = self._output[index]
        part = item["summary"][0]
        part["text"] = self._joined(index)
        where = {"item_id": item["id"], "output_index": index, "summary_index": 0}
        done = self._emit("response.reasoning_summary_text.done", **where, text=part["text"])
        done += self._emit("response.reasoning_summary_part.done", **where, part=part)
        return done + self._item_done(index)

    def _call_start(self, event: ToolCallStart) -> bytes:
        item: Payload
        if event.name in self._custom:
            item = {"type": "custom_tool_call", "id": _new_id("ctc"), "input": ""}
        else:
            item = {"type": "function_call", "id": _new_id("fc"), "arguments": ""}
            item["status"] = "in_progress"
        index, added = self._add(item | {"call_id": event.id, "name": event.name})
        self._calls[event.id] = index
        return added

    def _call_delta(self, event: ToolCallDelta) -> bytes:
        index = self._calls[event.id]
        item = self._output[index]
        if item["type"] != "function_call" or not (event.text and self._json_args):
            return b""  # a freeform input is a JSON string until it ends: sent whole then
        self._pieces.setdefault(index, []).append(event.text)
        return self._emit(
            "response.function_call_arguments.delta",
            item_id=item["id"],
            output_index=index,
            delta=event.text,
        )

    def _call_end(self, event: ToolCallEnd) -> bytes:
        index = self._calls.pop(event.id)
        item = self._output[index]
        where = {"item_id": item["id"], "output_index": index}
        whole = arguments_text(event.arguments) if event.ok else event.raw or ""
        if item["type"] == "custom_tool_call":
            value = event.arguments.get("input") if isinstance(event.arguments, dict) else None
            item["input"] = value if isinstance(value, str) else whole
            out = self._emit("response.custom_tool_call_input.delta", **where, delta=item["input"])
            out += self._emit("response.custom_tool_call_input.done", **where, input=item["input"])
            return out + self._item_done(index)
        out = b""
        item["arguments"] = self._joined(index)
        if not (self._json_args and item["arguments"]):
            item["arguments"] = whole
            out = self._emit("response.function_call_arguments.delta", **where, delta=whole)
        out += self._emit(
            "response.function_call_arguments.done",
            **where,
            name=item["name"],
            arguments=item["arguments"],
        )
        return out + self._item_done(index)

    def _ended(self, event: MessageEnd) -> bytes:
        if event.stop_reason == "error":
            self.done = True
            return b""  # the StreamError before it already failed the response
        out = self._close_text() + self._close_thinking()
        for index in list(self._calls.values()):
            out += self._item_done(index)
        cut = _INCOMPLETE.get(event.stop_reason)
        status = "incomplete" if cut else "completed"
        details = {"reason": cut} if cut else None
        self._final = self._response(status, usage=self._usage(event), incomplete_details=details)
        self.done = self.stopped = True
        return out + self._emit(f"response.{status}", response=self._final)

    def _usage(self, event: MessageEnd) -> Payload:
        given, produced, cached, reasoning = tokens(event, self._answering)
        return {
            "input_tokens": given,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": produced,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": given + produced,
        }

    def _failed(self, message: str) -> bytes:
        self.failure, self.done = message, True
        out = self._close_text() + self._close_thinking()  # what was said stays said
        error = {"code": "server_error", "message": message}
        return out + self._emit("response.failed", response=self._response("failed", error=error))

    def result(self) -> Payload:
        return self._final if self._final is not None else self._response("in_progress")


__all__ = ["SECRET_KEY", "ResponsesEncoder", "reasoning_secret"]

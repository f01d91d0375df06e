"""OpenAI Responses API stream decoder.

Theory of operation (https://platform.openai.com/docs/api-reference/responses-streaming).
Every SSE event carries a JSON payload with a ``type`` and a ``sequence_number``; the
stream ends with ``response.completed``, ``response.incomplete``, ``response.failed`` or
``error`` (there is no ``[DONE]``). Each payload is dispatched on its ``type`` through the
``_HANDLERS`` table; unknown types say nothing. A payload whose ``sequence_number`` was
already seen with the same content is the same provider event delivered twice (a retried
or replayed stream) and is dropped, so text is not doubled; payloads without a number are
all kept, and so is everything once a number turns up with other content (see
``_is_replay``).

A call is announced by ``response.output_item.added`` (``item.type`` ``function_call``,
or ``custom_tool_call`` for free-form tools whose input is raw text, not JSON). It is
keyed by its item id; argument events name ``item_id`` and ``output_index``, and either
finds it. ``response.function_call_arguments.done`` (or ``output_item.done``, or the
item in ``response.completed``, whichever comes first) carries the whole argument text,
and it is the provider's final word:

* equal to the deltas: the call ends;
* the deltas are a prefix of it (deltas were lost, or a server sends only ``done``): the
  missing suffix is sent as a delta, so the deltas still add up to the arguments;
* anything else: streamed deltas cannot be taken back, so a ``StreamError`` says the
  deltas were wrong and the call ends with the final text's arguments.

Items the API runs itself (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ``image_generation_call``) are server-run calls, as Anthropic's
``server_tool_use`` is: a ``ToolCallStart(server=True)`` named by the item type without
``_call`` when the item is added, and a ``ToolCallEnd`` with arguments ``{}`` and the
finished item (its action, status, outputs) as ``result`` when it is done. They never make
the response ``tool_use`` (docs/decoding.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from toolwire.decode._base import SSEJSONDecoder
from toolwire.decode._fields import get_dict
from toolwire.events import (
    Event,
    StopReason,
    StreamError,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from toolwire.sse import SSEEvent

_CALL_TYPES = frozenset({"function_call", "custom_tool_call"})
_SERVER_TYPES = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call"}
)

_Handler = Callable[["OpenAIResponsesDecoder", dict[str, Any], str, list[Event]], None]


@dataclass(slots=True)
class _Call:
    """One tool call from its announcement until it ends."""

    key: str
    custom: bool  # free-form input: raw text, delivered as ``{"input": text}``
    parts: list[str] = field(default_factory=list)  # argument text sent as deltas


def _str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _usage(usage: dict[str, Any]) -> Usage | None:
    if not usage:
        return None
    return Usage(
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=get_dict(usage, "input_tokens_details").get("cached_tokens"),
        reasoning_tokens=get_dict(usage, "output_tokens_details").get("reasoning_tokens"),
    )


def _error_message(error: dict[str, Any], default: str) -> str:
    message = _str(error, "message") or default
    code = error.get("code")
    return f"{code}: {message}" if code else message


class OpenAIResponsesDecoder(SSEJSONDecoder):
    """Decode an OpenAI Responses API SSE body (``stream: true``) into events."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[int, int] | None = {}  # sequence_number -> payload fingerprint
        self._open: dict[str, _Call] = {}
        self._ended: set[str] = set()
        self._by_index: dict[int, str] = {}  # output_index -> call key
        self._thinking_part: tuple[Any, Any, Any] | None = None  # the part thinking is in
        self._refused = False
        self._server: set[str] = set()  # open server-run items, by key

    def _on_payload(self, payload: dict[str, Any], sse: SSEEvent, out: list[Event]) -> None:
        # A payload fed without SSE framing (``feed_payload``) has no text of its own.
        raw = sse.data or json.dumps(payload)
        if self._is_replay(payload.get("sequence_number"), raw):
            return
        handler = self._HANDLERS.get(_str(payload, "type") or sse.event)
        if handler is not None:
            handler(self, payload, raw, out)

    def _is_replay(self, seq: Any, raw: str) -> bool:
        """Was this exact event (same number, same payload) delivered before?

        A number reused with another payload means the server does not number events
        uniquely: from then on nothing is dropped, since a dropped real event loses text.
        """
        if self._seen is None or not isinstance(seq, int):
            return False
        fingerprint = hash(raw)
        before = self._seen.get(seq)
        if before is None:
            self._seen[seq] = fingerprint
            return False
        if before == fingerprint:
            return True
        self._seen = None
        return False

    # -- text and reasoning ----------------------------------------------------------------

    def _on_text(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        delta = _str(p, "delta")
        if delta:
            out.append(TextDelta(delta))

    def _on_refusal(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        self._refused = True
        self._on_text(p, raw, out)

    def _on_thinking(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        delta = _str(p, "delta")
        if not delta:
            return
        # Summary parts (and reasoning items) are separate paragraphs; without a break
        # the last sentence of one runs into the first of the next.
        part = (p.get("type"), p.get("item_id"), p.get("summary_index", p.get("content_index")))
        if self._thinking_part is not None and part != self._thinking_part:
            delta = "\n\n" + delta
        self._thinking_part = part
        out.append(ThinkingDelta(delta))

    # -- tool calls ------------------------------------------------------------------------

    def _on_item_added(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        item = get_dict(p, "item")
        if item.get("type") in _SERVER_TYPES:
            self._server_item(item, p.get("output_index"), out, done=False)
            return
        if item.get("type") not in _CALL_TYPES:
            return
        key = self._key(item, p.get("output_index"))
        if key in self._open or self._was_ended(key, p.get("output_index")):
            return  # announced already
        call = self._start(key, item, p.get("output_index"), out)
        if call is None:
            return
        text = _final_text(item)
        if text:
            self._append(call, text, out)
        if item.get("status") == "completed":
            self._finish(call, text, out)

    def _on_item_done(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        item = get_dict(p, "item")
        if item.get("type") in _CALL_TYPES:
            self._settle(item, p.get("output_index"), out)
        elif item.get("type") in _SERVER_TYPES:
            self._server_item(item, p.get("output_index"), out, done=True)
        elif item.get("type") == "reasoning" and isinstance(item.get("encrypted_content"), str):
            # Kept whole, to go back to this backend only (backends.openai_responses).
            kept = {k: item[k] for k in ("type", "id", "summary", "encrypted_content") if k in item}
            kept.setdefault("summary", [])
            out.append(ThinkingDelta("", redacted=json.dumps(kept, separators=(",", ":"))))

    def _server_item(
        self, item: dict[str, Any], index: Any, out: list[Event], *, done: bool
    ) -> None:
        """A server-run item: start it once; end it, with the item as result, when done."""
        key = self._key(item, index)
        if key in self._ended:
            return
        if key not in self._server:
            kind = str(item.get("type"))
            call_id = _str(item, "id") or key
            out.append(self._calls.start(key, call_id, kind.removesuffix("_call"), server=True))
            self._server.add(key)
        if done or item.get("status") == "completed":
            self._server.discard(key)
            self._ended.add(key)
            result = {k: v for k, v in item.items() if k not in ("id", "type")}
            out.append(dataclasses.replace(self._calls.end(key), result=result))

    def _on_args_delta(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        call = self._find(_str(p, "item_id"), p.get("output_index"))
        if call is None:
            out.append(StreamError(f"{p.get('type')} for a call that is not open", raw))
            return
        delta = _str(p, "delta")
        if delta:
            self._append(call, delta, out)

    def _on_args_done(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        call = self._find(_str(p, "item_id"), p.get("output_index"))
        if call is not None:
            self._finish(call, _str(p, "input" if call.custom else "arguments"), out)

    def _settle(self, item: dict[str, Any], index: Any, out: list[Event]) -> None:
        """A finished call item: end it if open; announce and end it if never seen."""
        key = self._key(item, index)
        if self._was_ended(key, index):
            return
        call = self._find(_str(item, "id"), index)
        if call is None:
            call = self._start(key, item, index, out)
        if call is not None:
            self._finish(call, _final_text(item), out)

    def _start(self, key: str, item: dict[str, Any], index: Any, out: list[Event]) -> _Call | None:
        name = _str(item, "name")
        if not name:
            out.append(StreamError("a tool call item without a name", json.dumps(item)))
            return None
        custom = item.get("type") == "custom_tool_call"
        call_id = _str(item, "call_id") or _str(item, "id") or key
        out.append(self._calls.start(key, call_id, name, json_args=not custom))
        call = self._open[key] = _Call(key, custom)
        if isinstance(index, int):
            self._by_index[index] = key
        return call

    def _key(self, item: dict[str, Any], index: Any) -> str:
        return _str(item, "id") or f"#{index}"

    def _was_ended(self, key: str, index: Any) -> bool:
        # By output index too: an item announced without an id may be finished with one.
        by_index = self._by_index.get(index) if isinstance(index, int) else None
        return key in self._ended or (by_index is not None and by_index in self._ended)

    def _find(self, item_id: str | None, index: Any) -> _Call | None:
        if item_id is not None and item_id in self._open:
            return self._open[item_id]
        key = self._by_index.get(index) if isinstance(index, int) else None
        return self._open.get(key) if key is not None else None

    def _append(self, call: _Call, text: str, out: list[Event]) -> None:
        call.parts.append(text)
        delta = self._calls.delta(call.key, text)
        if delta is not None:
            out.append(delta)

    def _finish(self, call: _Call, final: str | None, out: list[Event]) -> None:
        """End a call against the provider's final argument text (see the module doc)."""
        del self._open[call.key]
        self._ended.add(call.key)
        ours = "".join(call.parts)
        if final is not None and final != ours and final.startswith(ours):
            self._append(call, final[len(ours) :], out)
            ours = final
        if final is None or final == ours:
            out.append(self._calls.end(call.key, {"input": ours} if call.custom else None))
            return
        out.append(StreamError("the final arguments disagree with the streamed deltas", final))
        if call.custom:
            out.append(self._calls.end(call.key, {"input": final}))
            return
        out.append(self._calls.end(call.key, text=final))

    # -- the end of the response ------------------------------------------------------------

    def _on_completed(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        response = get_dict(p, "response")
        output = response.get("output")
        for index, item in enumerate(output if isinstance(output, list) else ()):
            # A call still open here never got its done events; the final item settles it.
            if isinstance(item, dict) and self._find(_str(item, "id"), index) is not None:
                self._settle(item, index, out)
            elif isinstance(item, dict) and self._key(item, index) in self._server:
                self._server_item(item, index, out, done=True)
        stop: StopReason = "refusal" if self._refused else "end_turn"
        out.extend(self._calls.end_message(stop, _usage(get_dict(response, "usage"))))

    def _on_incomplete(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        response = get_dict(p, "response")
        reason = get_dict(response, "incomplete_details").get("reason")
        stop: StopReason = "refusal" if reason == "content_filter" else "max_tokens"
        out.extend(self._calls.end_message(stop, _usage(get_dict(response, "usage"))))

    def _on_failed(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        error = get_dict(get_dict(p, "response"), "error")
        out.extend(self._calls.fail_message(_error_message(error, "the response failed"), raw))

    def _on_error(self, p: dict[str, Any], raw: str, out: list[Event]) -> None:
        # Top-level ``code``/``message`` per the API reference; some servers nest ``error``.
        error = get_dict(p, "error") or p
        out.extend(self._calls.fail_message(_error_message(error, "provider error"), raw))

    _HANDLERS: ClassVar[dict[str, _Handler]] = {
        "response.output_text.delta": _on_text,
        "response.refusal.delta": _on_refusal,
        "response.reasoning_summary_text.delta": _on_thinking,
        "response.reasoning_text.delta": _on_thinking,
        "response.output_item.added": _on_item_added,
        "response.output_item.done": _on_item_done,
        "response.function_call_arguments.delta": _on_args_delta,
        "response.function_call_arguments.done": _on_args_done,
        "response.custom_tool_call_input.delta": _on_args_delta,
        "response.custom_tool_call_input.done": _on_args_done,
        "response.completed": _on_completed,
        "response.incomplete": _on_incomplete,
        "response.failed": _on_failed,
        "error": _on_error,
    }


def _final_text(item: dict[str, Any]) -> str | None:
    """A call item's whole argument text (``input`` for free-form custom tools)."""
    return _str(item, "input" if item.get("type") == "custom_tool_call" else "arguments")


__all__ = ["OpenAIResponsesDecoder"]

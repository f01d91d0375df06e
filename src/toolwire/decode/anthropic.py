"""Anthropic Messages stream decoder.

Theory of operation. The Messages API sends one JSON object per SSE event
(https://platform.claude.com/docs/en/build-with-claude/streaming): ``message_start``; per
content block ``content_block_start``, ``content_block_delta``*, ``content_block_stop``;
then ``message_delta`` (stop reason, cumulative usage) and ``message_stop``. ``ping`` and
``error`` may come anywhere. One handler per event type translates it; ``ToolCalls``,
keyed by block index, owns the start/delta/end invariants.

* A tool's name and id are complete in ``content_block_start``: the call starts there,
  before any argument byte (this is what makes the editor's "Read src/app.py" early).
* Arguments are the concatenation of ``input_json_delta.partial_json``. The first one is
  usually ``""``; a tool without arguments may get nothing at all, and empty text is ``{}``.
* ``content_block_stop`` ends a call. A call still open when the message ends was cut
  (``max_tokens`` stops a tool input mid-string without a ``content_block_stop``) and fails.
* ``message_delta`` means the content is complete: if the body then closes without
  ``message_stop`` the message still ends with the known stop reason. A body that closes
  before it was cut (the base class reports that).
* ``server_tool_use`` (web search, code execution, ...) is a call the API runs itself: it
  starts with ``server=True`` and its end is held until the block that answers it (a
  ``*_tool_result`` block naming its id) so the end carries that ``result``; a call never
  answered ends, without a result, when the message does. These calls never turn the
  stop reason into ``tool_use``: the provider's stands (docs/decoding.md).
* Unknown event, block and delta types are ignored: the API docs say clients must expect
  new ones. The dispatch key is the payload's ``type``, not the SSE ``event:`` line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from toolwire.decode._base import SSEJSONDecoder
from toolwire.decode._fields import get_dict, get_int, get_str
from toolwire.events import (
    Event,
    StopReason,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallEnd,
    Usage,
)
from toolwire.sse import SSEEvent

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    # The server paused a long turn (server tools such as web search); the caller must
    # send the response back to let it continue: the same loop as a tool call.
    "pause_turn": "tool_use",
    # The context window filled up mid-response: the output was cut, as with max_tokens.
    "model_context_window_exceeded": "max_tokens",
}

# Wire name -> Usage field. message_delta counts are cumulative: they overwrite.
_USAGE_FIELDS: dict[str, str] = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_creation_input_tokens": "cache_write_tokens",
}


class AnthropicDecoder(SSEJSONDecoder):
    """Decode an Anthropic Messages streaming body (``stream: true``) into events.

    ``feed(bytes)`` returns the events the bytes completed; ``close()`` settles the end
    (a body cut before ``message_delta`` gives failed calls, a ``stream_error`` and
    ``message_end("error")``).
    """

    def __init__(self) -> None:
        super().__init__()
        self._usage: dict[str, int] = {}
        self._stop: StopReason | None = None  # set once message_delta has come
        # Tool input sent whole in content_block_start (the Anthropic API always sends
        # ``{}`` there): used only if no argument text follows, as the SDK does.
        self._start_input: dict[int | None, str] = {}
        self._server: set[int | None] = set()  # open blocks that are server_tool_use
        self._unanswered: dict[str, ToolCallEnd] = {}  # ended server calls, by call id

    # -- dispatch ---------------------------------------------------------------------

    def _on_payload(self, payload: dict[str, Any], sse: SSEEvent, out: list[Event]) -> None:
        kind = payload.get("type")
        if kind == "error":
            # The one event kept verbatim, in the stream_error it becomes.
            self._error(payload, sse.data or json.dumps(payload), out)
            return
        handler = _EVENTS.get(kind) if type(kind) is str else None
        if handler is not None:
            handler(self, payload, out)

    def _on_close(self, out: list[Event]) -> None:
        self._flush_unanswered(out)
        if not self._calls.message_ended and self._stop is not None:
            # message_delta came, so the content is complete: only message_stop was lost.
            out.extend(self._calls.end_message(self._stop, self._usage_now()))
        elif not self._calls.message_ended:
            # Cut: the usage message_start reported is still what the provider bills.
            cut = "the stream ended before the response did"
            out.extend(self._calls.fail_message(cut, usage=self._usage_now()))
        super()._on_close(out)

    # -- message events ---------------------------------------------------------------

    def _message_start(self, payload: dict[str, Any], out: list[Event]) -> None:
        self._merge_usage(get_dict(get_dict(payload, "message"), "usage"))

    def _message_delta(self, payload: dict[str, Any], out: list[Event]) -> None:
        reason = get_str(get_dict(payload, "delta"), "stop_reason")
        # An unknown future stop reason is not an error: the response did end.
        self._stop = _STOP_REASONS.get(reason, "end_turn")
        self._merge_usage(get_dict(payload, "usage"))

    def _message_stop(self, payload: dict[str, Any], out: list[Event]) -> None:
        self._flush_unanswered(out)
        out.extend(self._calls.end_message(self._stop or "end_turn", self._usage_now()))

    def _error(self, payload: dict[str, Any], raw: str, out: list[Event]) -> None:
        # e.g. {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        error = payload.get("error")
        if isinstance(error, dict):
            kind, text = get_str(error, "type"), get_str(error, "message")
            message = f"{kind}: {text}" if kind and text else kind or text
        else:
            message = error if isinstance(error, str) else ""
        self._flush_unanswered(out)
        out.extend(self._calls.fail_message(message or "the provider reported an error", raw))

    def _merge_usage(self, usage: dict[str, Any]) -> None:
        for wire, name in _USAGE_FIELDS.items():
            value = usage.get(wire)
            if isinstance(value, int):
                self._usage[name] = value

    def _usage_now(self) -> Usage | None:
        return Usage(**self._usage) if self._usage else None

    # -- content blocks ---------------------------------------------------------------

    def _block_start(self, payload: dict[str, Any], out: list[Event]) -> None:
        block = get_dict(payload, "content_block")
        kind = get_str(block, "type")
        index = get_int(payload, "index")
        match kind:
            case "tool_use" | "server_tool_use":
                self._tool_start(index, block, out)
            case str() if kind.endswith("_tool_result") and "tool_use_id" in block:
                self._server_result(block, out)
            case "text" if block.get("text"):
                out.append(TextDelta(get_str(block, "text")))
            case "thinking" if block.get("thinking"):
                out.append(ThinkingDelta(get_str(block, "thinking")))
            case "redacted_thinking":
                # Arrives whole here; opaque, only ever sent back to Anthropic.
                out.append(ThinkingDelta("", redacted=get_str(block, "data")))

    def _tool_start(self, index: int | None, block: dict[str, Any], out: list[Event]) -> None:
        if self._calls.is_open(index):
            out.append(StreamError(f"content block {index} started twice", json.dumps(block)))
            return
        server = block.get("type") == "server_tool_use"
        out.append(
            self._calls.start(index, get_str(block, "id"), get_str(block, "name"), server=server)
        )
        if server:
            self._server.add(index)
        start_input = block.get("input")
        if isinstance(start_input, dict) and start_input:
            self._start_input[index] = json.dumps(start_input, ensure_ascii=False)

    def _block_delta(self, payload: dict[str, Any], out: list[Event]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, dict):
            return
        # citations_delta (a citation for the text block) and future delta types carry
        # nothing the normalized events have a place for: no case, ignored.
        match delta.get("type"):
            case "input_json_delta":
                # Inline, without get_int/get_str or a helper: this runs per few argument
                # characters, and each call saved is ~5% of bench/decode_args.py, row (a).
                index, text = payload.get("index"), delta.get("partial_json")
                if type(text) is str and text:
                    key = index if type(index) is int else None  # a list index is no key
                    if self._start_input:
                        self._start_input.pop(key, None)
                    # None for a block that is not an open tool call.
                    event = self._calls.delta(key, text)
                    if event is not None:
                        out.append(event)
            case "text_delta" if delta.get("text"):
                out.append(TextDelta(get_str(delta, "text")))
            case "thinking_delta" if delta.get("thinking"):
                out.append(ThinkingDelta(get_str(delta, "thinking")))
            case "signature_delta":
                out.append(ThinkingDelta("", signature=get_str(delta, "signature")))

    def _block_stop(self, payload: dict[str, Any], out: list[Event]) -> None:
        index = get_int(payload, "index")
        if not self._calls.is_open(index):
            return
        whole = self._start_input.pop(index, None)
        event = None if whole is None else self._calls.delta(index, whole)
        if event is not None:
            out.append(event)
        end = self._calls.end(index)
        if index in self._server and end.ok:
            self._server.discard(index)
            self._unanswered[end.id] = end  # until its result block comes
            return
        self._server.discard(index)
        out.append(end)

    def _server_result(self, block: dict[str, Any], out: list[Event]) -> None:
        end = self._unanswered.pop(get_str(block, "tool_use_id"), None)
        if end is not None:
            out.append(dataclasses.replace(end, result=block.get("content")))

    def _flush_unanswered(self, out: list[Event]) -> None:
        out.extend(self._unanswered.values())
        self._unanswered.clear()


_Handler = Callable[[AnthropicDecoder, dict[str, Any], list[Event]], None]

# ``error`` is handled in ``_on_payload``; ``ping`` and unknown types are absent on
# purpose: they are ignored.
_EVENTS: dict[str, _Handler] = {
    "message_start": AnthropicDecoder._message_start,
    "content_block_start": AnthropicDecoder._block_start,
    "content_block_delta": AnthropicDecoder._block_delta,
    "content_block_stop": AnthropicDecoder._block_stop,
    "message_delta": AnthropicDecoder._message_delta,
    "message_stop": AnthropicDecoder._message_stop,
}

__all__ = ["AnthropicDecoder"]

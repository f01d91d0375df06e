"""The shared middle of every decoder: open tool calls and the end of the message.

Provider modules translate their wire format; this module owns the invariants so no
provider can break them (docs/design.md, "Normalized events"):

* a call starts once, gets deltas only while open, and ends exactly once;
* a stream ends with exactly one ``MessageEnd``; calls still open then end with an error;
* a response that made client tool calls ends ``tool_use`` unless it was cut
  (``max_tokens``) or failed (``error``); server-run calls do not change the stop reason.

Calls whose arguments are JSON text (every JSON provider, Hermes) are parsed here with
``JsonStream``; decoders of markup formats (XML tags, Qwen3-Coder) build the arguments
themselves and pass ``fields`` and the final value explicitly (``json_args=False``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from toolwire.errors import UsageError
from toolwire.events import (
    Event,
    MessageEnd,
    StopReason,
    StreamError,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.jsonstream import JsonStream, parse_arguments

_KEEP_STOP: frozenset[str] = frozenset({"max_tokens", "error"})
_CUT_REASON: dict[str, str] = {
    "max_tokens": "the response hit max_tokens before the call's arguments ended",
    "error": "the stream failed before the call's arguments ended",
}


@dataclass(slots=True)
class _Open:
    id: str
    json: JsonStream | None
    raw: list[str] = field(default_factory=list)

    def text(self) -> str:
        return self.json.text if self.json is not None else "".join(self.raw)


class ToolCalls:
    """Open tool calls of one response, keyed by whatever the provider keys them by."""

    def __init__(self) -> None:
        self._open: dict[Hashable, _Open] = {}
        self._ids: set[str] = set()
        self.started = 0
        """How many calls this response started."""
        self.client_started = 0
        """How many of them the agent runs (not ``server``): these make it ``tool_use``."""
        self.message_ended = False

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    def start(
        self,
        key: Hashable,
        call_id: str,
        name: str,
        signature: str | None = None,
        *,
        json_args: bool = True,
        server: bool = False,
    ) -> ToolCallStart:
        """Start a call. The id is made unique within the response if the provider's is
        empty (``call_<n>``) or was already used (``<id>_<n>``)."""
        if key in self._open:
            raise UsageError(f"tool call {key!r} started twice")
        # Everything downstream (lifecycle, ACP toolCallId) keys calls by id: a server
        # that reuses one (or sends none: ``call_id`` "") must not merge two calls.
        call_id = call_id or f"call_{self.started}"
        while call_id in self._ids:
            call_id = f"{call_id}_{self.started}"
        self._ids.add(call_id)
        self._open[key] = _Open(call_id, JsonStream() if json_args else None)
        self.started += 1
        self.client_started += not server
        return ToolCallStart(call_id, name, self.started - 1, signature, server)

    def delta(
        self,
        key: Hashable,
        text: str,
        fields: tuple[str, ...] = (),
        values: tuple[Any, ...] = (),
    ) -> ToolCallDelta | None:
        """Argument text for a call; ``None`` for an empty fragment or a key not open.

        For JSON-argument calls ``fields`` and ``values`` are computed here; markup
        decoders pass them (the completed fields and their final values, in order).
        """
        call = self._open.get(key)
        if call is None:
            return None  # not an open call (a block that is not a tool, or already ended)
        json = call.json
        if json is not None:
            if not text:
                return None
            done = json.feed(text)
            if not done:
                return ToolCallDelta(call.id, text)
            partial = json.partial()
            return ToolCallDelta(call.id, text, done, tuple(partial[k] for k in done))
        if not text and not fields:
            return None
        call.raw.append(text)
        return ToolCallDelta(call.id, text, fields, values)

    def end(self, key: Hashable, arguments: Any = None, *, text: str | None = None) -> ToolCallEnd:
        """End a call normally.

        JSON-argument calls parse their text (``""`` means ``{}``) or end with the parse
        error; ``text`` replaces what was fed when the provider sends authoritative final
        arguments that disagree with its deltas. Markup decoders pass ``arguments``.
        """
        call = self._open.pop(key)
        if call.json is None:
            return ToolCallEnd(call.id, arguments={} if arguments is None else arguments)
        result = call.json.finish() if text is None else parse_arguments(text)
        if result.error is not None:
            return ToolCallEnd(call.id, error=result.error, raw=result.raw)
        return ToolCallEnd(call.id, arguments=result.value)

    def fail(self, key: Hashable, error: str) -> ToolCallEnd:
        """End a call with an error, keeping the raw argument text received so far."""
        call = self._open.pop(key)
        return ToolCallEnd(call.id, error=error, raw=call.text())

    def fail_all(self, error: str) -> list[ToolCallEnd]:
        return [self.fail(key, error) for key in list(self._open)]

    def end_message(self, stop_reason: StopReason, usage: Usage | None = None) -> list[Event]:
        """Close the response once: open calls fail, then one ``MessageEnd``."""
        if self.message_ended:
            return []
        self.message_ended = True
        out: list[Event] = []
        if self._open:
            why = _CUT_REASON.get(
                stop_reason, "the response ended before the call's arguments ended"
            )
            out.extend(self.fail_all(why))
        # Only calls the agent must run ask for their results; the provider's own
        # (server-run) calls leave its stop reason standing (end_turn, pause_turn).
        if self.client_started and stop_reason not in _KEEP_STOP:
            stop_reason = "tool_use"
        out.append(MessageEnd(stop_reason, usage))
        return out

    def fail_message(
        self, message: str, raw: str | None = None, usage: Usage | None = None
    ) -> list[Event]:
        """The stream broke: open calls fail, a ``StreamError``, then ``MessageEnd(error)``
        carrying the ``usage`` reported before the break (what the provider bills)."""
        if self.message_ended:
            return [StreamError(message, raw)]
        out: list[Event] = list(self.fail_all(f"the stream failed: {message}"))
        out.append(StreamError(message, raw))
        out.extend(self.end_message("error", usage))
        return out


__all__ = ["ToolCalls"]

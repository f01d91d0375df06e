"""Base for decoders whose wire format is SSE carrying one JSON object per event."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeAlias

from toolwire.decode._calls import ToolCalls
from toolwire.errors import UsageError
from toolwire.events import Event, StreamError
from toolwire.sse import SSEDecoder, SSEEvent

_NO_SSE = SSEEvent(data="")  # the envelope of a payload fed without SSE framing

Watcher: TypeAlias = Callable[[SSEEvent, dict[str, Any] | None], None]
"""Sees each SSE event of the message and its JSON object (``None``: not an object)."""


class SSEJSONDecoder(ABC):
    """``feed(bytes) -> events`` / ``close() -> events`` over an SSE body of JSON payloads.

    Subclasses implement ``_on_payload`` (one decoded JSON object) and may override
    ``_on_data`` for non-JSON sentinels such as ``[DONE]`` and ``_on_close`` for what a
    provider's stream owes at its end.
    """

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._calls = ToolCalls()
        self._closed = False
        self.watch: Watcher | None = None
        """Called with each event of the message as it is parsed, before it is decoded: the
        proxy relays an upstream's own bytes on what this decoder already parsed."""

    @property
    def boundary(self) -> int:
        """Where the last complete SSE event ends in the bytes fed (``SSEDecoder.boundary``)."""
        return self._sse.boundary

    def feed(self, data: bytes) -> list[Event]:
        if self._closed:
            raise UsageError("decoder.feed() called after close()")
        out: list[Event] = []
        for sse in self._sse.feed(data):
            self._on_data(sse, out)
        return out

    def feed_payload(self, payload: dict[str, Any], event: str = "message") -> list[Event]:
        """Feed one already-parsed event payload (for callers that did their own SSE/JSON).

        ``event`` is the SSE ``event:`` name, when the caller has it.
        """
        if self._closed:
            raise UsageError("decoder.feed_payload() called after close()")
        out: list[Event] = []
        if not self._calls.message_ended:
            sse = _NO_SSE if event == "message" else SSEEvent(data="", event=event)
            self._on_payload(payload, sse, out)
        return out

    def close(self) -> list[Event]:
        """End of body: flush, then settle every open call and the message."""
        if self._closed:
            return []
        out: list[Event] = []
        for sse in self._sse.close():
            self._on_data(sse, out)
        self._closed = True
        self._on_close(out)
        return out

    def _on_data(self, sse: SSEEvent, out: list[Event]) -> None:
        if self._calls.message_ended:
            return  # whatever follows the end of the message (keep-alives, [DONE]) says nothing
        try:
            payload = json.loads(sse.data)
        except (ValueError, RecursionError):  # nested past the parser's limit: malformed too
            payload = None
        if self.watch is not None:
            self.watch(sse, payload if isinstance(payload, dict) else None)
        if not isinstance(payload, dict):
            # One bad event is reported and skipped: what decoded before and after it stays.
            out.append(StreamError("malformed stream event: not a JSON object", sse.data))
            return
        self._on_payload(payload, sse, out)

    @abstractmethod
    def _on_payload(self, payload: dict[str, Any], sse: SSEEvent, out: list[Event]) -> None:
        """Translate one provider event."""

    def _on_close(self, out: list[Event]) -> None:
        """Default: a stream that never ended its message was cut."""
        if not self._calls.message_ended:
            out.extend(self._calls.fail_message("the stream ended before the response did"))

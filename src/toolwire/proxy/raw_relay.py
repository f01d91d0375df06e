"""Relaying a pass-through upstream's own bytes: the client gets Anthropic's stream as is.

An Anthropic-compatible upstream already speaks the client's format, and re-encoding it
would lose what toolwire's events do not carry (server tool blocks, citations, ``ping``).
So its bytes are relayed, cut only where an event ends. Each event is parsed once, by the
backend's own decoder (which decodes it for provenance and metrics): the relay watches it
(``attach``) for where events end (``boundary``), whether the upstream sent an ``error``
event and, for a non-streamed request, the payloads that make the one message. The
backend's events tell the stream's fate. If
the upstream breaks mid-event, the partial event is dropped and an SSE ``error`` event
ends the response, as on the translated path.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from starlette.responses import Response

from toolwire.backends.base import Tap
from toolwire.decode.anthropic import AnthropicDecoder
from toolwire.events import MessageEnd, StreamError
from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.encode import Payload, accumulate, error_payload, sse_bytes
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.scale import Scale
from toolwire.proxy.upstream import Opened
from toolwire.sse import SSEDecoder, SSEEvent

MALFORMED = "malformed stream event: not a JSON object"  # the decoders' words for it
_USAGE = ("message_start", "message_delta")  # the events whose usage is scaled


class RawRelay:
    """One pass-through response: its tap keeps the upstream's bytes, and the backend's
    decoder (``attach``) says where events end and what each one holds."""

    def __init__(self, scale: Scale | None = None) -> None:
        self._decoder: AnthropicDecoder | None = None
        self.scale = scale
        """Usage reported as a share of the client's window (``scale.py``); None: as sent."""
        self._data = bytearray()  # received, not yet relayed
        self._relayed = 0  # stream offset of ``_data[0]``
        # Parsed by the decoder: not yet relayed (streaming), or all of them (collect).
        self._events: list[tuple[str, Payload | None]] = []
        self.sent_error = False
        self.ended = False
        """The client got the stream's end: ``message_stop``, or an ``error`` event."""

    @property
    def tap(self) -> Tap:
        return self._data.extend

    def attach(self, decoder: AnthropicDecoder) -> None:
        """The decoder of the response: one parse of each event serves it and the relay."""
        self._decoder = decoder
        decoder.watch = self._watch

    def _watch(self, sse: SSEEvent, payload: Payload | None) -> None:
        self._events.append((sse.event, payload))

    def take(self) -> bytes:
        """The complete SSE events received since the last take (a partial one waits).

        The stream ends at ``message_stop`` or at an ``error`` event: nothing after it
        goes out. An event that is not a JSON object is not relayed: an ``error`` event
        in its place ends the stream (as the translated path ends on a ``StreamError``).
        """
        boundary = self._decoder.boundary if self._decoder is not None else 0
        cut = boundary - self._relayed
        if cut <= 0 or self.ended:
            self._events.clear()
            return b""
        out = bytes(self._data[:cut])
        del self._data[:cut]
        self._relayed += cut
        events, self._events = self._events, []
        if self.scale is not None:
            out = _rescaled(out, events, self.scale)
        last = next((i for i, e in enumerate(events) if _ends(e)), None)
        if last is None:
            return out
        # Rare (once per stream at most): where that event ends, from a parse of these
        # bytes alone (they start at an event boundary).
        ends = _event_ends(out)
        payload = events[last][1]
        self.ended = True
        # An event ``close()`` delivered without its blank line is past ``out``'s events.
        ends.append(len(out))
        if payload is None:  # the events before it, then the error in its place
            self.sent_error = True
            keep = ends[min(last, len(ends)) - 1] if last else 0
            return out[:keep] + sse_bytes(error_payload("api_error", MALFORMED))
        self.sent_error = payload.get("type") == "error"
        return out[: ends[min(last, len(ends) - 1)]]

    def stream(self, opened: Opened, metrics: Metrics, headers: dict[str, str]) -> Response:
        """The streamed answer: the upstream's own events, as they arrive."""
        body = self._relay(opened, metrics)
        return EventStreamResponse(body, {"cache-control": "no-cache", **headers})

    async def _relay(self, opened: Opened, metrics: Metrics) -> AsyncGenerator[bytes]:
        failure = opened.first.message if isinstance(opened.first, StreamError) else None
        ended = isinstance(opened.first, MessageEnd) and opened.first.stop_reason != "error"
        sent = 0  # added to the metrics once, as on the translated path
        try:
            chunk = self.take()
            if chunk:
                yield chunk
                sent += len(chunk)
            async for event in opened.rest:
                if self.sent_error:
                    break  # the client has its error: the upstream's rest is not read
                if isinstance(event, StreamError):
                    failure = event.message
                if isinstance(event, MessageEnd):
                    ended = event.stop_reason != "error"
                chunk = self.take()
                if chunk:
                    yield chunk
                    sent += len(chunk)
        finally:
            metrics.add("toolwire_proxy_bytes_total", sent)
            await opened.rest.aclose()
        if failure is not None or not ended:
            metrics.add("toolwire_proxy_errors_total", kind="upstream_stream")
        if self.ended:
            return
        if ended and failure is None:
            # ``message_delta`` came (the content is complete): only ``message_stop`` was lost.
            yield sse_bytes({"type": "message_stop"})
        else:
            message = failure or "the upstream stream ended before its message did"
            yield sse_bytes(error_payload("api_error", message))

    async def collect(self, opened: Opened) -> Payload:
        """The whole answer as one Messages response body; ``UpstreamError`` if it failed."""
        try:
            async for _ in opened.rest:
                pass
        finally:
            await opened.rest.aclose()
        payloads = _payloads(self._events)  # the events that ended: a partial one is cut
        failed = [p for p in payloads if p.get("type") == "error"]
        if failed or not any(p.get("type") == "message_stop" for p in payloads):
            error = failed[0].get("error") if failed else None
            error = error if isinstance(error, dict) else {}
            kind = str(error.get("type") or "api_error")
            message = str(error.get("message") or "the upstream stream ended early")
            raise UpstreamError(529 if kind == "overloaded_error" else 500, kind, message)
        try:
            whole = accumulate(payloads)
        except (LookupError, TypeError, ValueError) as e:
            message = f"the upstream's events do not make one message ({type(e).__name__})"
            raise UpstreamError(500, "api_error", message) from e
        return whole if self.scale is None else self.scale.payload(whole)


def _rescaled(out: bytes, events: list[tuple[str, Payload | None]], scale: Scale) -> bytes:
    """``out`` with the usage of its ``message_start`` and ``message_delta`` events scaled.

    Those events come once per stream each, so the other chunks pass untouched and only
    a chunk holding one is parsed again for where its events end; the event is written
    anew from its parsed payload (the same JSON, the usage changed).
    """
    marked = [i for i, (_, p) in enumerate(events) if p is not None and p.get("type") in _USAGE]
    if not marked:
        return out
    ends = _event_ends(out)
    pieces, done = [], 0
    for i in marked:
        if i >= len(ends):
            break  # not in ``out``: an event ``close()`` delivered without its blank line
        start = ends[i - 1] if i else 0
        payload = events[i][1]
        assert payload is not None  # marked only with one
        pieces += [out[done:start], sse_bytes(scale.payload(payload))]
        done = ends[i]
    pieces.append(out[done:])
    return b"".join(pieces)


def _ends(event: tuple[str, Payload | None]) -> bool:
    """Whether the client's stream ends with (or in place of) this event."""
    payload = event[1]
    return payload is None or payload.get("type") in ("message_stop", "error")


def _event_ends(data: bytes) -> list[int]:
    """Where each event in ``data`` ends (just past its blank line), in order."""
    decoder = SSEDecoder()
    ends: list[int] = []
    for line in data.splitlines(keepends=True):
        if decoder.feed(line):
            ends.append(decoder.boundary)
    return ends


def _payloads(events: list[tuple[str, Payload | None]]) -> list[Payload]:
    """Each event's JSON object; ``UpstreamError`` for one that is not (as the backend's
    decoder reports it when streaming)."""
    out: list[Payload] = []
    for _, payload in events:
        if payload is None:
            raise UpstreamError(500, "api_error", MALFORMED)
        out.append(payload)
    return out


__all__ = ["RawRelay"]

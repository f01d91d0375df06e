"""Relaying a pass-through upstream's own bytes: the client gets Anthropic's stream as is.

An Anthropic-compatible upstream already speaks the client's format, and re-encoding it
would lose what toolwire's events do not carry (server tool blocks, citations, ``ping``).
So its bytes are relayed, cut only at SSE event boundaries, while the same bytes are
decoded alongside (for provenance, metrics and the stream's fate). If the upstream
breaks mid-event, the partial event is dropped and an SSE ``error`` event ends the
response, as on the translated path.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator

from starlette.responses import Response

from toolwire.events import MessageEnd, StreamError
from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.encode import Payload, accumulate, error_payload, sse_bytes
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.upstream import Opened, UpstreamError
from toolwire.sse import SSEDecoder

_EVENT_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")  # the blank line that ends an SSE event
_ERROR_EVENT = re.compile(rb"(?:^|[\r\n])event: ?error[\r\n]")


class RawBuffer:
    """The upstream bytes not yet relayed; the tap of the upstream request."""

    def __init__(self) -> None:
        self._data = bytearray()
        self.sent_error = False

    def __call__(self, chunk: bytes) -> None:
        self._data += chunk

    def take(self) -> bytes:
        """The complete SSE events received so far (a partial one stays buffered)."""
        end = 0
        for separator in _EVENT_ENDS:
            found = self._data.rfind(separator)
            if found >= 0:
                end = max(end, found + len(separator))
        if not end:
            return b""
        out = bytes(self._data[:end])
        del self._data[:end]
        self.sent_error = self.sent_error or bool(_ERROR_EVENT.search(out))
        return out


def stream_raw(
    buffer: RawBuffer, opened: Opened, metrics: Metrics, headers: dict[str, str]
) -> Response:
    """The streamed answer: the upstream's own events, as they arrive."""
    return EventStreamResponse(
        _relay(buffer, opened, metrics), {"cache-control": "no-cache", **headers}
    )


async def _relay(buffer: RawBuffer, opened: Opened, metrics: Metrics) -> AsyncGenerator[bytes]:
    failure = opened.first.message if isinstance(opened.first, StreamError) else None
    ended = isinstance(opened.first, MessageEnd)
    sent = 0  # added to the metrics once, as on the translated path
    try:
        chunk = buffer.take()
        if chunk:
            yield chunk
            sent += len(chunk)
        async for event in opened.rest:
            if isinstance(event, StreamError):
                failure = event.message
            ended = ended or isinstance(event, MessageEnd)
            chunk = buffer.take()
            if chunk:
                yield chunk
                sent += len(chunk)
    finally:
        metrics.add("toolwire_proxy_bytes_total", sent)
        await opened.rest.aclose()
    if failure is not None or not ended:
        metrics.add("toolwire_proxy_errors_total", kind="upstream_stream")
        if not buffer.sent_error:
            message = failure or "the upstream stream ended before its message did"
            yield sse_bytes(error_payload("api_error", message))


async def collect_raw(buffer: RawBuffer, opened: Opened) -> Payload:
    """The whole answer as one Messages response body; ``UpstreamError`` if it failed."""
    try:
        async for _ in opened.rest:
            pass
    finally:
        await opened.rest.aclose()
    decoder = SSEDecoder()
    payloads: list[Payload] = []
    for event in [*decoder.feed(buffer.take()), *decoder.close()]:
        if event.data:
            payloads.append(json.loads(event.data))
    failed = [p for p in payloads if p.get("type") == "error"]
    if failed or not any(p.get("type") == "message_stop" for p in payloads):
        error = failed[0].get("error", {}) if failed else {}
        kind = str(error.get("type") or "api_error")
        message = str(error.get("message") or "the upstream stream ended early")
        raise UpstreamError(529 if kind == "overloaded_error" else 500, kind, message)
    return accumulate(payloads)


__all__ = ["RawBuffer", "collect_raw", "stream_raw"]

"""Relaying an opened upstream to the client: as an Anthropic SSE stream, or folded.

The hot path of the proxy: every upstream event passes through ``relay`` once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from starlette.responses import Response

from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.encode import AnthropicEncoder, Payload, accumulate, sse_bytes
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.upstream import Opened, UpstreamError


def stream_response(
    encoder: AnthropicEncoder, opened: Opened, metrics: Metrics, headers: dict[str, str]
) -> Response:
    """The streamed answer: the encoder's events as SSE, sent as they arrive."""
    body = relay(encoder, opened, metrics)
    return EventStreamResponse(body, {"cache-control": "no-cache", **headers})


async def relay(
    encoder: AnthropicEncoder, opened: Opened, metrics: Metrics
) -> AsyncGenerator[bytes, None]:
    """The SSE bytes of the stream; the upstream is closed however this ends."""
    # Cancellation (the client went away) lands in an await here; closing the upstream
    # generator in ``finally`` closes its HTTP response at once. Bytes sent are counted
    # here and added to the metrics once: a locked counter per event showed in profiles.
    sent = 0
    try:
        chunk = sse_bytes(encoder.start())
        for payload in encoder.feed(opened.first):
            chunk += sse_bytes(payload)
        yield chunk
        sent += len(chunk)
        async for event in opened.rest:
            chunk = encoder.feed_sse(event)
            if chunk:
                yield chunk
                sent += len(chunk)
            if encoder.done:
                break
    finally:
        metrics.add("toolwire_proxy_bytes_total", sent)
        await opened.rest.aclose()
    if not encoder.stopped:
        metrics.add("toolwire_proxy_errors_total", kind="upstream_stream")


async def collect(encoder: AnthropicEncoder, opened: Opened) -> Payload:
    """The whole answer as one Messages response body; ``UpstreamError`` if it failed."""
    payloads: list[Payload] = [encoder.start(), *encoder.feed(opened.first)]
    try:
        async for event in opened.rest:
            payloads += encoder.feed(event)
    finally:
        await opened.rest.aclose()
    failed = [p for p in payloads if p["type"] == "error"]
    if failed:
        raise UpstreamError(500, "api_error", failed[0]["error"]["message"])
    return accumulate(payloads)


def json_bytes(payload: Payload) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode()


__all__ = ["collect", "json_bytes", "relay", "stream_response"]

"""Relaying an opened upstream to the client, streamed or folded into one message.

A ``Relay`` is chosen with the request's plan: ``RawRelay`` (``raw_relay.py``) passes an
Anthropic upstream's own bytes; ``TranslatedRelay`` encodes toolwire's events back into
an Anthropic stream. Either answers ``stream`` (SSE as it arrives) and ``collect`` (the
whole answer as one Messages body). The translated relay is the proxy's hot path: every
upstream event passes through ``_relay`` once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Protocol

from starlette.responses import Response

from toolwire.backends import encodable
from toolwire.backends.base import Tap
from toolwire.config.choices import WireFormat
from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.encode import AnthropicEncoder, Payload, accumulate, sse_bytes
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.scale import Scale
from toolwire.proxy.upstream import Opened


class Relay(Protocol):
    """How one response reaches the client."""

    @property
    def tap(self) -> Tap | None:
        """What receives the upstream's raw bytes (None: the events suffice)."""
        ...

    def stream(self, opened: Opened, metrics: Metrics, headers: dict[str, str]) -> Response:
        """The streamed answer; the upstream is closed however it ends."""
        ...

    async def collect(self, opened: Opened) -> Payload:
        """The whole answer as one Messages response body; ``UpstreamError`` if it failed."""
        ...


@dataclass(frozen=True, slots=True)
class Answering:
    """What another dialect's encoder (``proxy.dialects``) knows of its plan: the model
    the client asked for, the input ``estimate``, whether argument pieces are JSON text
    (``json_args``), the usage ``scale`` (``scale.py``) and the backend's wire format
    (whose usage counts cache reads as input or not)."""

    model: str
    estimate: int
    json_args: bool
    scale: Scale | None
    wire_format: WireFormat


RelayFactory = Callable[[Answering], Relay]
"""Another dialect's relay of a plan (which then never passes the body through)."""


class TranslatedRelay:
    """Toolwire's events encoded as an Anthropic stream (``encode.py``)."""

    tap: Tap | None = None

    def __init__(
        self, model: str, *, input_tokens: int, json_args: bool, scale: Scale | None = None
    ) -> None:
        self._model = model
        self._input_tokens = input_tokens
        self._json_args = json_args
        self._scale = scale

    def _encoder(self) -> AnthropicEncoder:
        return AnthropicEncoder(
            self._model,
            input_tokens=self._input_tokens,
            json_args=self._json_args,
            scale=self._scale,
        )

    def stream(self, opened: Opened, metrics: Metrics, headers: dict[str, str]) -> Response:
        body = relay(self._encoder(), opened, metrics)
        return EventStreamResponse(body, {"cache-control": "no-cache", **headers})

    async def collect(self, opened: Opened) -> Payload:
        encoder = self._encoder()
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


def json_bytes(payload: Payload) -> bytes:
    text = json.dumps(payload, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate in the upstream's text
        return encodable(text).encode()


__all__ = ["Answering", "Relay", "RelayFactory", "TranslatedRelay", "json_bytes", "relay"]

"""The latency histograms of ``/metrics`` (``metrics.LATENCIES``), observed as each
response starts: time to first byte (from the request's arrival), the upstream's time
to its first event, and what the proxy added (the first minus the second), per backend
and the dialect the client spoke.

An ASGI middleware, so the routes of every dialect are measured the same way: the app
names the backend (``x-toolwire-backend``) and the upstream's time (``server-timing:
upstream;dur=MS``, which clients may read too) on the response; a response without a
backend (an error before one was chosen, ``/healthz``) is not observed.
"""

from __future__ import annotations

import re
import time
from typing import Any

from toolwire.proxy.metrics import Metrics

# The client-facing path of each dialect; another path is named as it is.
DIALECTS = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
}
_UPSTREAM = re.compile(rb"(?:^|,)\s*upstream;dur=([0-9.]+)")


def upstream_timing(seconds: float) -> str:
    """The ``server-timing`` value naming the upstream's time to its first event."""
    return f"upstream;dur={seconds * 1000:.1f}"


class Latencies:
    """The middleware (Starlette's ``Middleware(Latencies, metrics=...)``)."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic()

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                self._observe(scope, message, time.monotonic() - arrived)
            await send(message)

        await self.app(scope, receive, sending)

    def _observe(self, scope: Any, message: Any, first_byte: float) -> None:
        headers = dict(message.get("headers") or ())
        backend = headers.get(b"x-toolwire-backend")
        if backend is None:
            return
        path = scope.get("path", "")
        labels = {"backend": backend.decode(errors="replace"),
                  "dialect": DIALECTS.get(path, path)}  # fmt: skip
        self.metrics.observe("toolwire_proxy_time_to_first_byte_seconds", first_byte, **labels)
        found = _UPSTREAM.search(headers.get(b"server-timing", b""))
        if found is None:
            return
        upstream = float(found.group(1)) / 1000
        self.metrics.observe("toolwire_proxy_upstream_latency_seconds", upstream, **labels)
        self.metrics.observe("toolwire_proxy_added_latency_seconds", first_byte - upstream,
                             **labels)  # fmt: skip


__all__ = ["DIALECTS", "Latencies", "upstream_timing"]

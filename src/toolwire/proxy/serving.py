"""Serving the proxy with uvicorn: read deadlines and a connection cap (docs/proxy.md, "Limits").

uvicorn starts no timer before a request's headers are complete, so a client that
connects and sends nothing, or its headers a byte at a time, holds a socket for ever;
and its ``limit_concurrency`` answers 503 to every request past the limit, ``/healthz``
included. ``GuardedProtocol`` (uvicorn's httptools protocol, the one it picks when
httptools is installed, as it is with toolwire) adds what is missing:

* ``header_timeout``: from a connection's first byte wait (or a request's first byte on
  a kept-alive connection) to the end of the headers; then a client that sent part of a
  request gets ``408 timeout_error`` and the connection is closed (one that sent nothing
  is closed).
* ``max_header_bytes``: the request line and headers, counted as they arrive, before any
  key is checked: past it the answer is ``431 request_too_large`` and the connection is
  closed, so a client without a key holds at most that much (plus one socket read) of
  the proxy's memory however long the headers it sends. httptools has no limit of its
  own: it gathers a header's value until its end.
* ``body_timeout``: the app answers a body that is not complete in time with a 408
  (``app.py``); past that plus ``BODY_GRACE`` the protocol closes the connection, also
  for a body that no endpoint reads.
* ``max_connections``: a request on a connection past the cap is answered ``529
  overloaded_error`` (connection closed), except ``GET /healthz``, which still answers;
  past the cap plus ``HEALTH_RESERVE`` a connection is closed as soon as it is accepted,
  so descriptors stay bounded whatever clients do.
"""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolwire.proxy.encode import error_payload
from toolwire.proxy.settings import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_HEADER_BYTES,
    ProxySettings,
)

HEALTH_PATH = b"/healthz"
HEALTH_RESERVE = 16
"""Connections past ``max_connections`` accepted all the same, for health checks."""
BODY_GRACE = 1.0
"""Seconds past ``body_timeout`` before the protocol closes: the app's 408 comes first."""
OVERLOADED = "the proxy is at its connection limit (max_connections); retry shortly"


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with read deadlines and a connection cap (module doc)."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._head: int | None = 0
        """Bytes of the request's line and headers so far (None: they are complete)."""
        self._refused = False
        self._steps = 0  # headers and requests completed on this connection
        self._begun = False  # a request's first byte came (its headers may not have)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # the refusal is sent; nothing more is read
        steps = self._steps
        super().data_received(data)
        # Only a read that ended no headers and no request is all header bytes.
        if self._head is not None and steps == self._steps and not self._refused:
            self._head += len(data)
            if self._head > self.max_header_bytes:
                self._refuse(431, "request_too_large", self._too_large())

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections + HEALTH_RESERVE:
            transport.close()
            return
        self._arm(self.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._begun = True
        if self._deadline is None:  # a new request on a kept-alive connection
            self._arm(self.header_timeout)

    def on_headers_complete(self) -> None:
        self._head, self._steps = None, self._steps + 1
        size = len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers)
        if size > self.max_header_bytes:  # they came whole, in one read
            self._refuse(431, "request_too_large", self._too_large())
            return
        self._arm(self.body_timeout + BODY_GRACE)
        path = self.url.partition(b"?")[0]
        if len(self.connections) <= self.max_connections or path == HEALTH_PATH:
            super().on_headers_complete()
            return
        app, self.app = self.app, _overloaded  # uvicorn reads ``self.app`` right here
        try:
            super().on_headers_complete()
        finally:
            self.app = app

    def on_body(self, body: bytes) -> None:
        if not self._refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._disarm()
        # A kept-alive connection's next request starts from nothing.
        self._head, self._steps, self._begun = 0, self._steps + 1, False
        super().on_message_complete()

    def _too_large(self) -> str:
        return (
            f"the request's line and headers are over {self.max_header_bytes} bytes "
            "(max_header_bytes)"
        )

    def _refuse(self, status: int, kind: str, message: str) -> None:
        """Answer ``status`` in Anthropic's shape before any app sees the request; close."""
        self._refused = True
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(_response(status, kind, message))
            self.transport.close()

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self._begun and self._head is not None:  # part of a request, not its headers' end
            took = f"the request's headers took over {self.header_timeout:g} s (header_timeout)"
            self._refuse(408, "timeout_error", took)
        elif not self.transport.is_closing():
            self.transport.close()


_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


def _response(status: int, kind: str, message: str) -> bytes:
    body = json.dumps(error_payload(kind, message)).encode()
    head = (
        f"HTTP/1.1 {status} ".encode() + _REASONS[status] + b"\r\n"
        b"content-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n"
        b"connection: close\r\n\r\n"
    )
    return head + body


async def _overloaded(scope: Any, receive: Any, send: Any) -> None:
    """The answer to a request past the connection cap, in Anthropic's error shape."""
    body = json.dumps(error_payload("overloaded_error", OVERLOADED)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 529, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def guarded_protocol(settings: ProxySettings) -> type[GuardedProtocol]:
    """``GuardedProtocol`` with ``settings``' deadlines and cap."""
    limits = {
        "header_timeout": settings.header_timeout,
        "body_timeout": settings.body_timeout,
        "max_connections": settings.max_connections,
        "max_header_bytes": settings.max_header_bytes,
    }
    return type("GuardedProtocol", (GuardedProtocol,), limits)


def uvicorn_options(settings: ProxySettings) -> dict[str, Any]:
    """The ``uvicorn.run``/``uvicorn.Config`` options that serve within ``settings``' limits."""
    return {"http": guarded_protocol(settings), "timeout_keep_alive": settings.keep_alive_timeout}


def uvicorn_config(app: Any, settings: ProxySettings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration that serves ``app`` within ``settings``' limits."""
    return uvicorn.Config(app, **uvicorn_options(settings), **options)


def settle_heap() -> int:
    """Keep what start-up made out of every later garbage collection; returns how many
    objects that is.

    A full collection walks every object the process holds, and the modules, the config
    and the app are most of them (about 60,000): tens of milliseconds during which no
    stream moves, the worst pause a relayed event met with a hundred streams open.
    They live as long as the process, so once frozen (``gc.freeze``) a collection walks
    only what requests made since. For the process that serves (``toolwire proxy``),
    once, before it listens: what is alive then is collected first, so no garbage is
    frozen with it.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


__all__ = [
    "GuardedProtocol",
    "guarded_protocol",
    "settle_heap",
    "uvicorn_config",
    "uvicorn_options",
]

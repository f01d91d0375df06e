"""A scripted HTTP server on 127.0.0.1 that streams chunked bodies, for backend tests.

Each request takes the next scripted ``Reply`` in order: a status, headers, and body
chunks written with chunked transfer encoding (so the client sees them arrive one by
one), optionally paced, cut (the connection dropped mid-body), stalled (a read timeout)
or kept open with keep-alive comments until the client goes away (cancellation). Every
request is recorded with its headers and body.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delay_headers: float = 0.0  # seconds before the status line (connect/read timeouts)
    chunk_delay: float = 0.0  # seconds between chunks
    drop_after: int | None = None  # close the socket after this many chunks, body unfinished
    stall_after: int | None = None  # after this many chunks, send nothing more until stopped
    trickle: bool = False  # after the chunks, send SSE comments until the client disconnects
    reset: bool = False  # no answer at all: the connection is reset (a TCP RST)


@dataclass
class Received:
    """One request as the server saw it (header names lowercased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeServer:
    """``with FakeServer() as server: server.script(Reply(...)); ... server.url``.

    ``respond``: a function that answers each request instead of the script (a fake that
    decides by what it was sent, e.g. one that enforces a context window)."""

    def __init__(self, respond: Callable[[Received], Reply] | None = None) -> None:
        self.respond = respond
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.disconnected = threading.Event()  # a trickle write failed: the client left
        self.disconnected_at: float | None = None
        self.stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.timeout = 0  # handle_request() is called when a connection waits
        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        os.write(self._wake[1], b"x")
        self._thread.join(timeout=5)
        self._server.server_close()
        for fd in self._wake:
            os.close(fd)

    def _serve(self) -> None:
        # serve_forever's loop, woken by __exit__ at once: serve_forever polls for its
        # shutdown flag, and every test's teardown waited up to that interval.
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while not self.stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self._server and not self.stopping.is_set():
                        self._server.handle_request()  # ready: it does not wait


class _Handler(BaseHTTPRequestHandler):
    fake: FakeServer  # set by _handler
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        self._answer("POST")

    def do_GET(self) -> None:
        self._answer("GET")

    def _answer(self, method: str) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        received = Received(method, self.path, headers, body)
        self.fake.requests.append(received)
        if self.fake.respond is not None:
            reply = self.fake.respond(received)
        elif self.fake.replies:
            reply = self.fake.replies.popleft()
        else:
            reply = Reply(500, [b"no scripted reply"])
        self.close_connection = True
        if reply.reset:
            # A zero linger turns the close into a reset, as a crashed upstream gives.
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.connection.close()
            return
        if reply.delay_headers and self.fake.stopping.wait(reply.delay_headers):
            return
        try:
            self._reply(reply)
        except OSError:
            self._client_left()

    def _reply(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.status >= 300:
            data = b"".join(reply.chunks)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for i, chunk in enumerate(reply.chunks):
            if i == reply.drop_after:
                return self._drop()
            if i == reply.stall_after:
                self.fake.stopping.wait(30)
                return None
            if i and reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            self._chunk(chunk)
        if reply.drop_after is not None and reply.drop_after >= len(reply.chunks):
            return self._drop()
        if reply.trickle:
            return self._trickle()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return None

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def _drop(self) -> None:
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)

    def _trickle(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self.fake.stopping.is_set():
            self._chunk(b": keep-alive\n\n")  # raises once the client has gone
            time.sleep(0.01)

    def _client_left(self) -> None:
        self.fake.disconnected_at = time.monotonic()
        self.fake.disconnected.set()


def _handler(fake: FakeServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"fake": fake})


def sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """An SSE body: ``(event name or None, JSON payload or raw str)`` pairs."""
    out = []
    for name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.append((f"event: {name}\n" if name else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def pieces(data: bytes, size: int) -> list[bytes]:
    """``data`` in pieces of ``size`` bytes."""
    return [data[i : i + size] for i in range(0, len(data), size)]


def serving(*replies: Reply) -> Iterator[FakeServer]:
    """Generator for a pytest fixture: a started server with ``replies`` scripted."""
    with FakeServer() as server:
        server.script(*replies)
        yield server


__all__ = ["FakeServer", "Received", "Reply", "pieces", "serving", "sse"]

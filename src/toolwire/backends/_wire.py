"""The HTTP client backends share, and its lean path for plain-HTTP upstreams.

``http_client()`` makes the client; whoever makes it closes it (``async with``): the
proxy in its Starlette lifespan, the ACP agent around its connection. Backends receive
it (``client=``); one made without becomes a private client per response.

Its transport, ``LeanTransport``, speaks HTTP/1.1 itself over asyncio streams for
``http://`` URLs (local and loopback model servers, where the per-event cost shows):
keep-alive connections, each socket read handed up as one piece however many chunks it
held, the response parsed by ``_h1`` (llhttp). Measured against httpx2's own path on
the same proxy workload: 1.9-2.1x the events/s, 2.2-3x less CPU per unpaced event
(BENCHMARKS.md, "HTTP transport: lean vs httpx2"). ``https://``, HEAD and any URL an
environment proxy applies to go to httpx2's own transport.

Failures are raised as the httpx2 exceptions httpcore would raise (``ConnectError``,
``ConnectTimeout``, ``ReadTimeout``, ``ReadError``, ``RemoteProtocolError``, ...), so
``http`` translates them the same way for both paths.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncGenerator
from functools import cache

import httpx2

from toolwire.backends._h1 import Head, ProtocolError, ResponseReader

_KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (httpx2's default)
_MAX_IDLE_PER_HOST = 64
_READ_SIZE = 65536
_BODY = "toolwire_lean_body"  # the response extension that holds a lean body


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: building it loads the CA bundle, ~30-80 ms."""
    return httpx2.create_ssl_context()


def http_client(*, lean: bool = True) -> httpx2.AsyncClient:
    """A client for backends to share; the caller closes it. Timeouts are per request.

    ``lean=False`` sends ``http://`` through httpx2's own transport too (what the
    benchmark compares against)."""
    # No connection limit: each relayed stream holds its own upstream connection.
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=20)
    transport: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport(
        verify=tls_context(), limits=limits
    )
    if lean:
        transport = LeanTransport(transport)
    return httpx2.AsyncClient(verify=tls_context(), limits=limits, transport=transport)


class _ClosedIdleError(Exception):
    """A reused connection ended before any byte of the response came back."""


class _Conn:
    """One HTTP/1.1 connection: its streams and when it went idle."""

    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self) -> bool:
        fresh = time.monotonic() - self.idle_since < _KEEPALIVE_EXPIRY
        return fresh and not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class LeanTransport(httpx2.AsyncBaseTransport):
    """HTTP/1.1 for ``http://`` URLs; everything else to ``fallback`` (module doc)."""

    def __init__(self, fallback: httpx2.AsyncBaseTransport) -> None:
        self._fallback = fallback
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        # HEAD: its response announces a body that never comes, and httptools offers no
        # way to say so; backends only POST.
        if url.scheme != "http" or request.method == "HEAD":
            return await self._fallback.handle_async_request(request)
        timeout: dict[str, float | None] = request.extensions.get("timeout", {})
        key = (url.host, url.port or 80)
        reused = self._checkout(key)
        if reused is not None:
            try:
                return await self._exchange(request, key, reused, timeout, reused=True)
            except _ClosedIdleError:
                pass  # the upstream closed it as we sent: once more, on a new connection
        conn = await _connect(request, key, timeout.get("connect"))
        return await self._exchange(request, key, conn, timeout, reused=False)

    async def _exchange(
        self,
        request: httpx2.Request,
        key: tuple[str, int],
        conn: _Conn,
        timeout: dict[str, float | None],
        *,
        reused: bool,
    ) -> httpx2.Response:
        """Send ``request`` on ``conn`` and read the response's head.

        A kept-alive connection the upstream closed just as the request went out (its
        idle timeout, or a server that closes after each response without saying so)
        fails with nothing read back: that raises ``_ClosedIdleError`` so the request
        is sent again on a new connection, as HTTP clients do for that race (the
        upstream saw no request it answered). Anything else, or a fresh connection,
        raises the httpx2 error."""
        body = _Body(self, key, conn, request, timeout.get("read"))
        try:
            await _write(request, conn, timeout.get("write"))
            head = await body.read_head()
        except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as e:
            conn.close()
            if reused and not body.received:
                raise _ClosedIdleError from e
            raise
        except BaseException:
            conn.close()
            raise
        return httpx2.Response(
            head.status,
            headers=head.headers,
            stream=body,
            request=request,
            extensions={"http_version": b"HTTP/" + head.version, _BODY: body},
        )

    def _checkout(self, key: tuple[str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    def checkin(self, key: tuple[str, int], conn: _Conn) -> None:
        """Keep ``conn`` for the next request to ``key`` (or close it)."""
        idle = self._idle.setdefault(key, [])
        if self._closed or len(idle) >= _MAX_IDLE_PER_HOST:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        await self._fallback.aclose()


async def _connect(request: httpx2.Request, key: tuple[str, int], limit: float | None) -> _Conn:
    try:
        async with asyncio.timeout(limit):
            reader, writer = await asyncio.open_connection(*key)
    except TimeoutError as e:
        raise httpx2.ConnectTimeout("timed out while connecting", request=request) from e
    except OSError as e:
        raise httpx2.ConnectError(str(e) or type(e).__name__, request=request) from e
    return _Conn(reader, writer)


async def _write(request: httpx2.Request, conn: _Conn, limit: float | None) -> None:
    body = await request.aread()
    target = request.url.raw_path.decode("ascii")
    lines = [f"{request.method} {target} HTTP/1.1".encode()]
    headers = request.headers
    lines += [b"%s: %s" % (k, v) for k, v in headers.raw]
    if body and "content-length" not in headers and "transfer-encoding" not in headers:
        lines.append(b"content-length: %d" % len(body))
    conn.writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
    try:
        async with asyncio.timeout(limit):
            await conn.writer.drain()
    except TimeoutError as e:
        raise httpx2.WriteTimeout("timed out while sending the request", request=request) from e
    except OSError as e:
        raise httpx2.WriteError(str(e) or type(e).__name__, request=request) from e


class _Body(httpx2.AsyncByteStream):
    """A response read as it arrives; the connection goes back to the pool only when the
    body was read to its end and both sides allow keep-alive."""

    def __init__(
        self,
        transport: LeanTransport,
        key: tuple[str, int],
        conn: _Conn,
        request: httpx2.Request,
        limit: float | None,
    ) -> None:
        self._transport = transport
        self._key = key
        self._conn: _Conn | None = conn
        self._request = request
        self._limit = limit
        self._parser = ResponseReader()
        self.received = False  # a byte of the response came

    async def read_head(self) -> Head:
        """Read until the final response's head is in (body bytes may come with it)."""
        while self._parser.head is None:
            await self._step("timed out waiting for the response")
        return self._parser.head

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        return self._chunks()

    async def _chunks(self) -> AsyncGenerator[bytes, None]:
        parser = self._parser
        while True:
            data = parser.take()
            if data:
                yield data
            if parser.done:
                return
            await self._step("timed out reading the response")

    async def _step(self, timed_out: str) -> None:
        """One socket read, fed to the parser (end of connection included)."""
        assert self._conn is not None
        try:
            async with asyncio.timeout(self._limit):
                data = await self._conn.reader.read(_READ_SIZE)
            if data:
                self.received = True
                self._parser.feed(data)
            else:
                self._parser.eof()
        except TimeoutError as e:
            raise httpx2.ReadTimeout(timed_out, request=self._request) from e
        except ProtocolError as e:
            raise httpx2.RemoteProtocolError(str(e), request=self._request) from e
        except OSError as e:
            raise httpx2.ReadError(str(e) or type(e).__name__, request=self._request) from e

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._parser.reusable:
            self._transport.checkin(self._key, conn)
        else:
            conn.close()


def body_chunks(response: httpx2.Response) -> AsyncGenerator[bytes, None]:
    """The response body as it arrives: ``aiter_bytes()``, minus httpx2's layers (three
    async generators per piece) when the lean transport made it and nothing is encoded.
    Close it (``aclosing``) when done with it early."""
    body = response.extensions.get(_BODY)
    if isinstance(body, _Body) and "content-encoding" not in response.headers:
        return body.__aiter__()
    return response.aiter_bytes()


__all__ = ["LeanTransport", "body_chunks", "http_client", "tls_context"]

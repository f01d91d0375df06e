"""The HTTP client every backend shares: one per event loop, with a lean plain-HTTP path.

Why not one ``httpx2.AsyncClient`` per request: every request then paid for a new
connection, and every relayed event for httpx2's body path (httpcore's connection, h11's
state machine and anyio's cancel scopes: about half the proxy's CPU per event). So:

* ``shared_client`` keeps one client per (running loop, timeouts). A client is bound to
  the loop it was made on (its connections are), so it is never handed to another loop;
  it is closed when its loop shuts down (``asyncio.run`` closes the loop's async
  generators, and a parked one here closes the clients), else with its loop's
  collection.
* Its transport, ``LeanTransport``, speaks HTTP/1.1 itself over asyncio streams for
  ``http://`` URLs (local and loopback model servers, where the per-event cost shows):
  keep-alive connections, chunked or sized bodies, and each socket read handed up as one
  piece, however many chunks it held. ``https://`` goes to httpx2's own transport, and
  so does any URL an environment proxy applies to (httpx2 mounts those itself).

Failures are raised as the httpx2 exceptions httpcore would raise (``ConnectError``,
``ConnectTimeout``, ``ReadTimeout``, ``ReadError``, ``RemoteProtocolError``, ...), so
``_http`` translates them the same way for both paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import weakref
from collections.abc import AsyncGenerator

import httpx2

_KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is kept (httpx2's default)
_MAX_IDLE_PER_HOST = 64
_READ_SIZE = 65536
_HEAD_LIMIT = 65536  # bytes of a status line and headers
_BODY = "toolwire_lean_body"  # the response extension that holds a lean body


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
        if url.scheme != "http":
            return await self._fallback.handle_async_request(request)
        timeout: dict[str, float | None] = request.extensions.get("timeout", {})
        key = (url.host, url.port or 80)
        conn = self._checkout(key) or await _connect(request, key, timeout.get("connect"))
        try:
            await _write(request, conn, timeout.get("write"))
            status, headers, version = await _read_head(request, conn, timeout.get("read"))
        except BaseException:
            conn.close()
            raise
        body = _Body(self, key, conn, request, status, headers, version, timeout.get("read"))
        return httpx2.Response(
            status,
            headers=headers,
            stream=body,
            request=request,
            extensions={"http_version": b"HTTP/1.1", _BODY: body},
        )

    def _checkout(self, key: tuple[str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return None

    def _checkin(self, key: tuple[str, int], conn: _Conn) -> None:
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
            reader, writer = await asyncio.open_connection(*key, limit=_HEAD_LIMIT)
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


async def _read_head(
    request: httpx2.Request, conn: _Conn, limit: float | None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The status, headers and HTTP version of the final response (1xx ones skipped)."""
    while True:
        try:
            async with asyncio.timeout(limit):
                head = await conn.reader.readuntil(b"\r\n\r\n")
        except TimeoutError as e:
            raise httpx2.ReadTimeout("timed out waiting for the response", request=request) from e
        except asyncio.IncompleteReadError as e:
            msg = "Server disconnected without sending a response."
            raise httpx2.RemoteProtocolError(msg, request=request) from e
        except asyncio.LimitOverrunError as e:
            msg = "the response headers are too long"
            raise httpx2.RemoteProtocolError(msg, request=request) from e
        except OSError as e:
            raise httpx2.ReadError(str(e) or type(e).__name__, request=request) from e
        status_line, *lines = head[:-4].split(b"\r\n")
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            msg = f"malformed status line {status_line[:80]!r}"
            raise httpx2.RemoteProtocolError(msg, request=request)
        status = int(parts[1])
        if 100 <= status < 200:
            continue
        headers = []
        for line in lines:
            name, sep, value = line.partition(b":")
            if not sep:
                raise httpx2.RemoteProtocolError(f"malformed header {line[:80]!r}", request=request)
            headers.append((name.strip(), value.strip()))
        return status, headers, parts[0]


class _Body(httpx2.AsyncByteStream):
    """A response body, read as it arrives; the connection goes back to the pool only
    when the body was read to its end and both sides allow keep-alive."""

    def __init__(
        self,
        transport: LeanTransport,
        key: tuple[str, int],
        conn: _Conn,
        request: httpx2.Request,
        status: int,
        headers: list[tuple[bytes, bytes]],
        version: bytes,
        limit: float | None,
    ) -> None:
        self._transport = transport
        self._key = key
        self._conn: _Conn | None = conn
        self._request = request
        self._limit = limit
        self._complete = False
        fields = {k.lower(): v.lower() for k, v in headers}
        self._chunked = b"chunked" in fields.get(b"transfer-encoding", b"")
        length = fields.get(b"content-length", b"")
        self._length: int | None = int(length) if length.isdigit() else None
        if request.method == "HEAD" or status in (204, 304):
            self._length = 0
            self._chunked = False
        self._reusable = (
            version == b"HTTP/1.1"
            and b"close" not in fields.get(b"connection", b"")
            and (self._chunked or self._length is not None)
        )

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        return self._dechunked() if self._chunked else self._sized()

    async def _read(self) -> bytes:
        assert self._conn is not None
        try:
            if self._limit is None:
                return await self._conn.reader.read(_READ_SIZE)
            async with asyncio.timeout(self._limit):
                return await self._conn.reader.read(_READ_SIZE)
        except TimeoutError as e:
            raise httpx2.ReadTimeout("timed out reading the response", request=self._request) from e
        except OSError as e:
            raise httpx2.ReadError(str(e) or type(e).__name__, request=self._request) from e

    async def _sized(self) -> AsyncGenerator[bytes, None]:
        left = self._length
        while left is None or left > 0:
            data = await self._read()
            if not data:
                if left is None:
                    break  # the body ends with the connection
                raise self._incomplete()
            if left is not None:
                data = data[:left]
                left -= len(data)
            yield data
        self._complete = True

    async def _dechunked(self) -> AsyncGenerator[bytes, None]:
        buf = b""
        left = 0  # bytes of the current chunk's data still to come
        while True:
            data = await self._read()
            if not data:
                raise self._incomplete()
            buf += data
            out: list[bytes] = []
            while buf:
                if left:
                    out.append(buf[:left])
                    taken = len(out[-1])
                    buf, left = buf[taken:], left - taken
                    continue
                line, sep, after = buf.partition(b"\r\n")
                if not sep:
                    break
                if not line:  # the CRLF that ends a chunk's data
                    buf = after
                    continue
                try:
                    size = int(line.split(b";", 1)[0], 16)
                except ValueError:
                    msg = f"malformed chunk size {line[:40]!r}"
                    raise httpx2.RemoteProtocolError(msg, request=self._request) from None
                if size == 0:
                    if out:
                        yield b"".join(out)
                    await self._trailers(after)
                    return
                buf, left = after, size
            if out:
                yield b"".join(out)

    async def _trailers(self, buf: bytes) -> None:
        """Read past the trailer section so the connection can carry the next request."""
        while b"\r\n" not in buf[:2] and b"\r\n\r\n" not in buf:
            data = await self._read()
            if not data:
                raise self._incomplete()
            buf += data
        end = 2 if buf.startswith(b"\r\n") else buf.index(b"\r\n\r\n") + 4
        self._complete = not buf[end:]  # bytes past the body: not a connection to reuse

    def _incomplete(self) -> httpx2.RemoteProtocolError:
        msg = "peer closed connection without sending complete message body"
        return httpx2.RemoteProtocolError(msg, request=self._request)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._complete and self._reusable:
            self._transport._checkin(self._key, conn)
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


# -- one client per event loop ---------------------------------------------------------

_Key = tuple[float | None, float | None, float | None, float | None]
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Key, httpx2.AsyncClient]]
_CLIENTS = weakref.WeakKeyDictionary()
_KEEPERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]]
_KEEPERS = weakref.WeakKeyDictionary()


def shared_client(timeout: httpx2.Timeout, verify: ssl.SSLContext) -> httpx2.AsyncClient:
    """The running loop's client for these timeouts (made on first use; module doc)."""
    loop = asyncio.get_running_loop()
    clients = _CLIENTS.get(loop)
    if clients is None:
        clients = _CLIENTS[loop] = {}
        keeper = _KEEPERS[loop] = _closer(loop)
        # Run to its ``yield`` now (the first step of ``asend`` is synchronous): the loop's
        # async generator hook registers it, and the loop's shutdown (``shutdown_asyncgens``)
        # resumes it into the ``finally`` that closes the clients.
        with contextlib.suppress(StopIteration):
            keeper.asend(None).send(None)
    key = (timeout.connect, timeout.read, timeout.write, timeout.pool)
    client = clients.get(key)
    if client is None or client.is_closed:
        # No connection limit: each relayed stream holds its own upstream connection.
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=20)
        fallback = httpx2.AsyncHTTPTransport(verify=verify, limits=limits)
        client = httpx2.AsyncClient(
            timeout=timeout, verify=verify, limits=limits, transport=LeanTransport(fallback)
        )
        clients[key] = client
    return client


async def _closer(loop: asyncio.AbstractEventLoop) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        # Out of both maps: the keeper refers to its loop (as every async generator does,
        # through the loop's finalizer hook), which would otherwise never be collected.
        del _KEEPERS[loop]
        for client in _CLIENTS.pop(loop, {}).values():
            await client.aclose()


__all__ = ["LeanTransport", "body_chunks", "shared_client"]

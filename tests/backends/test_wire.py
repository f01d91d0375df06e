"""The backends' HTTP client: the lean transport's connections, and who closes a client."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx2
import pytest

from tests.backends.support import FAST, REQUEST, anthropic_body
from tests.helpers import needs_shared
from toolwire.backends import http_client
from toolwire.backends._wire import LeanTransport, body_chunks
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.events import MessageEnd

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    sock: socket.socket = server.sockets[0]
    return server, int(sock.getsockname()[1])


class _Unused(httpx2.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise AssertionError("plain http must not reach the fallback")


def _lean() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=LeanTransport(_Unused()))


async def _drain(response: httpx2.Response) -> None:
    async for _ in body_chunks(response):
        pass


def test_lean_transport_keeps_alive_and_dechunks_reads_whole() -> None:
    """Three requests, one connection; chunks split anywhere come out in order."""
    connections = 0
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in [b"data: a\n\n", b"data: bc\n\n"])
    body += b"0\r\n\r\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
                for i in range(0, len(body), 3):  # a write (and often a read) per 3 bytes
                    writer.write(body[i : i + 3])
                    await writer.drain()
                    await asyncio.sleep(0)
        except asyncio.IncompleteReadError:
            pass  # the client closed its connection
        finally:
            writer.close()

    async def main() -> list[bytes]:
        server, port = await _serve(handle)
        out = []
        async with server, _lean() as client:
            for _ in range(3):
                async with client.stream("GET", f"http://127.0.0.1:{port}/") as r:
                    pieces = [p async for p in body_chunks(r)]
                    out.append(b"".join(pieces))
        return out

    assert asyncio.run(main()) == [b"data: a\n\ndata: bc\n\n"] * 3
    assert connections == 1


def test_lean_transport_errors_are_httpx_errors() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab")
        await writer.drain()
        writer.close()

    async def main() -> None:
        server, port = await _serve(cut)
        url = f"http://127.0.0.1:{port}/"
        async with server, _lean() as client, client.stream("GET", url) as r:
            with pytest.raises(httpx2.RemoteProtocolError):
                await _drain(r)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        async with _lean() as client:
            with pytest.raises(httpx2.ConnectError):
                await client.get(f"http://127.0.0.1:{closed}/")

    asyncio.run(main())


def test_a_malformed_response_is_a_protocol_error_and_its_connection_is_dropped() -> None:
    async def bad(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nabc")
            await writer.drain()
            assert await reader.read() == b""  # the client hung up
        finally:
            writer.close()

    async def main() -> None:
        server, port = await _serve(bad)
        async with server, _lean() as client:
            with pytest.raises(httpx2.RemoteProtocolError, match="chunked"):
                await client.get(f"http://127.0.0.1:{port}/")

    asyncio.run(main())


def test_a_kept_alive_connection_closed_as_the_request_goes_out_is_retried_once_fresh() -> None:
    """The race every keep-alive client meets: the upstream closes an idle connection
    (its timeout, or it closes after each answer without ``connection: close``) just as
    the next request is sent on it. That request is sent again on a new connection and
    answered; a fresh connection that fails the same way is an error, not a loop."""
    answered: list[bytes] = []
    unanswered: list[bytes] = []
    connections = 0

    async def closes_after_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            answered.append(head.split(b" ")[1])
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")  # the next one came: close, unanswered
            unanswered.append(head.split(b" ")[1])
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()

    async def never_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async def main() -> None:
        server, port = await _serve(closes_after_one)
        async with server, _lean() as client:
            for path in ("/a", "/b", "/c"):
                response = await client.post(f"http://127.0.0.1:{port}{path}", content=b"{}")
                assert (response.status_code, response.content) == (200, b"ok")
        assert answered == [b"/a", b"/b", b"/c"]
        assert unanswered == [b"/b", b"/c"]  # each met the closing connection first
        assert connections == 3
        server, port = await _serve(never_answers)
        async with server, _lean() as client:
            with pytest.raises(httpx2.RemoteProtocolError):
                await client.post(f"http://127.0.0.1:{port}/", content=b"{}")

    asyncio.run(main())


class _Counting:
    """An Anthropic-speaking server that counts connections and the ones the client closed."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed_by_client = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.opened += 1
        body = anthropic_body()
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
                writer.write(b"content-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except asyncio.IncompleteReadError:
            self.closed_by_client += 1
        finally:
            writer.close()


def _backend(port: int, client: httpx2.AsyncClient | None) -> AnthropicBackend:
    url = f"http://127.0.0.1:{port}"
    return AnthropicBackend(name="c", model="m", base_url=url, settings=FAST, client=client)


async def _twice(backend: AnthropicBackend) -> None:
    for _ in range(2):
        events = [e async for e in backend.stream(REQUEST)]
        assert isinstance(events[-1], MessageEnd)


@needs_shared
def test_a_given_client_is_shared_and_left_open_for_its_maker_to_close() -> None:
    counting = _Counting()

    async def main() -> None:
        server, port = await _serve(counting.handle)
        async with server:
            async with http_client() as client:
                await _twice(_backend(port, client))
                await _twice(_backend(port, client))  # another backend, same connection
                assert not client.is_closed
                assert counting.closed_by_client == 0
            await asyncio.sleep(0.05)  # the server sees the close

    asyncio.run(main())
    assert counting.opened == 1
    assert counting.closed_by_client == 1


@needs_shared
def test_without_a_client_each_response_gets_a_private_one_closed_with_it() -> None:
    counting = _Counting()

    async def main() -> None:
        server, port = await _serve(counting.handle)
        async with server:
            await _twice(_backend(port, None))
            await asyncio.sleep(0.05)

    asyncio.run(main())
    assert counting.opened == 2
    assert counting.closed_by_client == 2


@needs_shared
def test_http_client_lean_false_sends_plain_http_through_httpx2() -> None:
    counting = _Counting()

    async def main() -> None:
        server, port = await _serve(counting.handle)
        async with server, http_client(lean=False) as client:
            assert not isinstance(client._transport, LeanTransport)
            await _twice(_backend(port, client))

    asyncio.run(main())
    assert counting.opened == 1

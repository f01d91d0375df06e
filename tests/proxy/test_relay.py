"""The relay's hot path: pooled upstream clients, the lean transport, the SSE fast path."""

from __future__ import annotations

import asyncio
import socket

import httpx2
import pytest

from toolwire.backends._wire import _CLIENTS, LeanTransport, body_chunks, shared_client
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallDelta, ToolCallStart
from toolwire.proxy.encode import AnthropicEncoder, sse_bytes

TIMEOUT = httpx2.Timeout(5.0)


def test_one_client_per_loop_closed_when_the_loop_ends() -> None:
    async def take() -> tuple[httpx2.AsyncClient, httpx2.AsyncClient, httpx2.AsyncClient]:
        first = shared_client(TIMEOUT, None)  # type: ignore[arg-type]
        again = shared_client(TIMEOUT, None)  # type: ignore[arg-type]
        other = shared_client(httpx2.Timeout(1.0), None)  # type: ignore[arg-type]
        return first, again, other

    first, again, other = asyncio.run(take())
    assert first is again
    assert first is not other
    assert first.is_closed
    assert other.is_closed
    second = asyncio.run(take())[0]
    assert second is not first
    assert not _CLIENTS  # nothing kept for loops that are gone


async def _serve(handler: object) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)  # type: ignore[arg-type]
    sock: socket.socket = server.sockets[0]
    return server, int(sock.getsockname()[1])


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
        async with server, httpx2.AsyncClient(transport=LeanTransport(_unused())) as client:
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
        async with (
            server,
            httpx2.AsyncClient(transport=LeanTransport(_unused())) as client,
            client.stream("GET", f"http://127.0.0.1:{port}/") as r,
        ):
            with pytest.raises(httpx2.RemoteProtocolError):
                await _drain(r)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        async with httpx2.AsyncClient(transport=LeanTransport(_unused())) as client:
            with pytest.raises(httpx2.ConnectError):
                await client.get(f"http://127.0.0.1:{closed}/")

    asyncio.run(main())


def test_fast_text_frames_equal_the_payload_frames() -> None:
    events: list[Event] = [
        TextDelta("plain"),
        TextDelta('quotes " \\ and \n newlines \x00 \u2028 é 😀'),
        TextDelta(""),
        ToolCallStart("call_1", "Read", 0),
        ToolCallDelta("call_1", '{"path":'),
        TextDelta("after a tool"),
        MessageEnd("end_turn"),
        TextDelta("after the end"),
    ]
    fast, slow = AnthropicEncoder("m"), AnthropicEncoder("m")
    for event in events:
        expected = b"".join(sse_bytes(p) for p in slow.feed(event))
        assert fast.feed_sse(event) == expected


class _Unused(httpx2.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise AssertionError("plain http must not reach the fallback")


async def _drain(response: httpx2.Response) -> None:
    async for _ in body_chunks(response):
        pass


def _unused() -> httpx2.AsyncBaseTransport:
    return _Unused()

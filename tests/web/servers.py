"""A raw HTTP/1.1 server on 127.0.0.1 in the test's event loop, routes by path.

Raw (asyncio streams, not a framework) so a test controls every byte: a body trickled a
byte a second, 50 MB without ``Content-Length``, a redirect anywhere. It notes when each
client closed its connection (``closed``), as the server saw it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

Route = Callable[[asyncio.StreamWriter], Awaitable[None]]


def head(status: str, *headers: str) -> bytes:
    """A response head with ``Connection: close``."""
    lines = [f"HTTP/1.1 {status}", *headers, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def page(body: bytes, content_type: str = "text/html; charset=utf-8") -> Route:
    """A route answering ``body`` whole."""

    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(
            head("200 OK", f"Content-Type: {content_type}", f"Content-Length: {len(body)}")
        )
        writer.write(body)

    return send


def redirect(location: str) -> Route:
    async def send(writer: asyncio.StreamWriter) -> None:
        writer.write(head("302 Found", f"Location: {location}", "Content-Length: 0"))

    return send


@dataclass
class Server:
    routes: dict[str, Route]
    port: int = 0
    hits: list[str] = field(default_factory=list)
    closed: list[float] = field(default_factory=list)
    """Loop times at which a client's connection was seen closed."""
    started: list[float] = field(default_factory=list)
    """Loop times at which a route began answering."""

    def url(self, path: str = "/", host: str = "site.test") -> str:
        return f"http://{host}:{self.port}{path}"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            path = request.split(b" ")[1].decode()
            self.hits.append(path)
            route = self.routes.get(path) or page(b"not found", "text/plain")
            self.started.append(loop.time())
            answer = asyncio.ensure_future(_hung_up_is_done(route(writer)))
            # b"" once the client hangs up (with a FIN; with a reset, the same: no error)
            gone = asyncio.ensure_future(_hung_up_is_done(reader.read(1)))
            done, _ = await asyncio.wait({answer, gone}, return_when=asyncio.FIRST_COMPLETED)
            if gone in done:
                self.closed.append(loop.time())
                answer.cancel()
            else:
                await writer.drain()
                gone.cancel()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed.append(loop.time())
        finally:
            writer.close()


async def _hung_up_is_done(work: Awaitable[object]) -> None:
    """``work``, ended quietly when the client resets the connection: a task whose error
    nobody reads would fail the test that started the server, not the one it serves."""
    with suppress(ConnectionError):
        await work


@asynccontextmanager
async def serve(routes: dict[str, Route]) -> AsyncIterator[Server]:
    server = Server(routes)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server

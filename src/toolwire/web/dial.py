"""The connection of one hop: httpcore2 with a network backend that dials the vetted
address, whatever host the URL names.

httpcore2 still takes the host from the URL for the ``Host`` header and for TLS (SNI and
the certificate check), so pinning the address changes nothing a server sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import httpcore2

from toolwire.web.resolve import Target


class PinnedBackend(httpcore2.AsyncNetworkBackend):
    """Connects to ``address`` only, for the one host and port it was vetted for."""

    def __init__(self, target: Target) -> None:
        self._target = target
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        if (host.strip("[]").lower(), port) != (self._target.host, self._target.port):
            raise httpcore2.ConnectError(f"{host}:{port} was not vetted for this connection")
        return await self._inner.connect_tcp(
            str(self._target.address), port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("a fetch never opens a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@asynccontextmanager
async def get(target: Target, headers: list[tuple[str, str]]) -> AsyncIterator[httpcore2.Response]:
    """A streamed ``GET`` of ``target.url`` on a connection of its own, closed on the way
    out (a cancel or the deadline closes the socket at once)."""
    pool = httpcore2.AsyncConnectionPool(
        network_backend=PinnedBackend(target), max_connections=1, retries=0
    )
    async with pool, pool.stream("GET", target.url, headers=headers) as response:
        yield response


__all__ = ["PinnedBackend", "get"]

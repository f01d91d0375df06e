"""The network allow list: an HTTP proxy on a Unix socket, on the host side.

A sandbox whose ``network`` is a list of hosts has no network of its own; the launcher's
bridge joins its 127.0.0.1 to this proxy's socket, and ``HTTP(S)_PROXY`` point there.
The proxy takes ``CONNECT host:port`` (HTTPS, anything tunnelled) and absolute-form
requests (``GET http://host/...``), and opens the connection only when ``allowed``
says so: the host matches a pattern, on port 80 or 443 or the pattern's own
(``example.com:8080``), and it does not resolve to a private, loopback or
link-local address unless it was listed by its exact name. Anything else gets a 403.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import ipaddress
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Final

log = logging.getLogger("toolwire.sandbox")
Resolver = Callable[[str, int], Awaitable[list[str]]]
_HEAD_LIMIT = 65536
#: The ports a listed host is reached on when the pattern names none.
WEB_PORTS: Final = (80, 443)


async def resolve(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (the system resolver)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def host_and_ports(pattern: str) -> tuple[str, tuple[int, ...]]:
    """A listed pattern's host part and the ports it opens: its own ``:PORT``, else the
    web's two (a listed host is for HTTP and HTTPS, not for its SSH or database)."""
    host, colon, port = pattern.rpartition(":")
    if colon and port.isdigit():
        return host.lower(), (int(port),)
    return pattern.lower(), WEB_PORTS


def matches(host: str, patterns: Sequence[str], port: int | None = None) -> str | None:
    """The pattern ``host`` (on ``port``, when given) matches (``*.example.com`` matches
    its subdomains), or None."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        name, ports = host_and_ports(pattern)
        if port is not None and port not in ports:
            continue
        if host == name or (name.startswith("*.") and fnmatch.fnmatchcase(host, name)):
            return pattern
    return None


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_global and not ip.is_multicast


async def allowed(
    host: str, port: int, patterns: Sequence[str], resolver: Resolver = resolve
) -> str | None:
    """The address to connect to for ``host:port``, or None when it is refused."""
    pattern = matches(host, patterns, port)
    if pattern is None:
        return None
    try:
        addresses = await resolver(host, port)
    except OSError:
        return None
    exact = host_and_ports(pattern)[0] == host.lower().rstrip(".")
    usable = [a for a in addresses if exact or _public(a)]
    return usable[0] if usable else None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()


def _target(line: str) -> tuple[str, str, int, str] | None:
    """``(method, host, port, rest)`` of a request line, None when it is not a proxy's."""
    parts = line.split()
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (method, host.strip("[]"), int(port), "") if port.isdigit() else None
    if not target.startswith("http://"):
        return None
    authority, slash, path = target[len("http://") :].partition("/")
    host, colon, port = authority.rpartition(":")
    if not colon or not port.isdigit():
        host, port = authority, "80"
    return method, host.strip("[]"), int(port), f"{method} {slash}{path} {version}"


class AllowListProxy:
    """The proxy of one sandbox (module doc); ``start`` it, then ``aclose`` it."""

    def __init__(self, patterns: Sequence[str], path: Path, resolver: Resolver = resolve) -> None:
        self.patterns = list(patterns)
        self.path = path
        self._resolver = resolver
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        """Listen on ``path`` (only this user may connect)."""
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        os.chmod(self.path, 0o600)

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        with contextlib.suppress(OSError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        first, _, headers = head.decode("latin-1").partition("\r\n")
        target = _target(first)
        address = None
        if target is not None:
            address = await allowed(target[1], target[2], self.patterns, self._resolver)
        if target is None or address is None:
            host = target[1] if target else "?"
            log.info("sandbox proxy refused %s", host)
            writer.write(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            writer.close()
            return
        method, host, port, rest = target
        try:
            up_reader, up_writer = await asyncio.open_connection(address, port)
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(f"{rest}\r\n{headers}".encode("latin-1"))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


__all__ = [
    "WEB_PORTS",
    "AllowListProxy",
    "Resolver",
    "allowed",
    "host_and_ports",
    "matches",
    "resolve",
]

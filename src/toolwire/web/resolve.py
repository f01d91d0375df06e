"""Where one hop connects: the host resolved once, every address vetted, one picked.

The address picked here is the one dialled (``dial.PinnedBackend``): no second lookup
happens between the check and the connection, so a name that answers a public address
to the check and ``127.0.0.1`` to the connection (DNS rebinding) reaches nothing.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, urlsplit, urlunsplit

from toolwire.web.address import IPAddress, allowed, literal_address, refusal
from toolwire.web.errors import RefusedError

SCHEMES = {"http": 80, "https": 443}
#: A host as it is sent: dot-separated labels of letters, digits, ``-`` and ``_``, or an
#: IPv6 literal (hex, colons, dots). Anything else (NUL and other controls, ``%``,
#: spaces, ``\\``) could match an ``allow_hosts`` pattern and then be read otherwise
#: by the resolver, so it is refused before any pattern is tried.
_HOST = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*|[0-9a-f:.]*:[0-9a-f:.]*", re.ASCII)


@dataclass(frozen=True, slots=True)
class Target:
    """One hop: the URL, its host and port as sent, and the address to dial."""

    url: str
    scheme: str
    host: str
    port: int
    address: IPAddress


def split(url: str) -> tuple[SplitResult, str, int]:
    """``url`` checked: ``http``/``https``, a host, no credentials; with host and port.
    The parts are as sent: a host in another script in its IDNA (``xn--``) form, the
    path and query percent-encoded (HTTP carries ASCII only)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise RefusedError(f"Not a valid URL: {url} ({exc}).") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise RefusedError(
            f"Only http and https URLs are fetched, not {scheme or 'a URL without a scheme'}."
        )
    if parts.username is not None or parts.password is not None:
        raise RefusedError("URLs with a user name or password are not fetched.")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise RefusedError(f"The URL has no host: {url}")
    if not url.isascii():
        host, parts = _as_sent(parts, host, port)
    if not _HOST.fullmatch(host):
        raise RefusedError(f"Not a valid host name: {host!r}; a host is letters, digits, - and .")
    return parts, host, port if port is not None else SCHEMES[scheme]


def _as_sent(parts: SplitResult, host: str, port: int | None) -> tuple[str, SplitResult]:
    """``parts`` with an IDNA host and a percent-encoded path and query."""
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise RefusedError(f"Not a valid host name: {host} ({exc}).") from None
    netloc = host if port is None else f"{host}:{port}"
    kept = "/%:@!$&'()*+,;=-._~?"  # what a URL already means: encode only the rest
    path, query = quote(parts.path, safe=kept), quote(parts.query, safe=kept)
    return host, urlsplit(urlunsplit((parts.scheme, netloc, path, query, "")))


async def target(url: str, pins: Mapping[str, str], allow: Sequence[str]) -> Target:
    """The address this hop connects to (module doc), or ``RefusedError`` saying why."""
    parts, host, port = split(url)
    url, scheme = urlunsplit(parts), parts.scheme.lower()
    try:
        literal = literal_address(host)
    except ValueError as exc:
        raise RefusedError(f"Refused {host}: {exc}.") from None
    pinned = pins.get(host)
    if literal is not None:
        found: list[IPAddress] = [literal]
    elif pinned is not None:
        found = [ipaddress.ip_address(pinned)]
    else:
        found = await _lookup(host, port)
    if allowed(host, port, allow):
        return Target(url, scheme, host, port, found[0])
    for address in found:
        if refusal(address) is None:
            return Target(url, scheme, host, port, address)
    why = refusal(found[0])
    raise RefusedError(
        f"Refused {host}: it resolves to {found[0]} ({why}), and toolwire fetches only "
        "public addresses. The user can allow the host in [tools.web] allow_hosts."
    )


async def _lookup(host: str, port: int) -> list[IPAddress]:
    """Every address of ``host``, in the resolver's order (``getaddrinfo`` in a thread)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise RefusedError(f"Could not resolve {host}: {exc.strerror or exc}.") from None
    found: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in found:
            found.append(address)
    if not found:
        raise RefusedError(f"Could not resolve {host}: no address.")
    return found


__all__ = ["SCHEMES", "Target", "split", "target"]

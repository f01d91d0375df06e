"""Which addresses a fetch may connect to: pure functions over ``ipaddress``.

Refused unless the host is allowed by name: loopback, private, link-local, CGNAT
(100.64/10), unique-local (fc00::/7), multicast, ``0.0.0.0/8`` and every other range
that is not globally reachable, and the same IPv4 ranges inside IPv6 (mapped, compatible,
6to4, NAT64, Teredo). A literal host is read the way browsers and ``inet_aton`` read it
(``2130706433``, ``0x7f.1``, ``0177.0.0.1``), so no spelling of ``127.0.0.1`` gets past.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final, TypeAlias

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4_RANGES: Final = tuple(
    (ipaddress.IPv4Network(net), why)
    for net, why in (
        ("0.0.0.0/8", "this-network (0.0.0.0/8)"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("100.64.0.0/10", "shared CGNAT (100.64.0.0/10)"),
        ("169.254.0.0/16", "link-local"),
        ("224.0.0.0/4", "multicast"),
    )
)
_V6_RANGES: Final = tuple(
    (ipaddress.IPv6Network(net), why)
    for net, why in (
        ("::1/128", "loopback"),
        ("::/128", "unspecified"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("fc00::/7", "unique-local (fc00::/7)"),
        ("ff00::/8", "multicast"),
        ("64:ff9b:1::/48", "local-use NAT64"),
    )
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_NUMBER = re.compile(r"(0x[0-9a-f]*|[0-9]+)", re.IGNORECASE)


def literal_address(host: str) -> IPAddress | None:
    """``host`` (as it stands in a URL, lower-cased) read as an IP address, in any of the
    spellings a resolver accepts; None for a name. ``ValueError`` for a host that looks
    like a number but is none (``1.2.3.999``): resolvers disagree on those."""
    if ":" in host:  # only IPv6 has colons (``urlsplit`` drops the brackets)
        inner = host.strip("[]")
        if "%" in inner:
            raise ValueError(f"{host}: an IPv6 zone index is not allowed")
        return ipaddress.IPv6Address(inner)
    name = host[:-1] if host.endswith(".") else host
    parts = name.split(".")
    if not parts or not _NUMBER.fullmatch(parts[-1]):
        return None  # a name: its last label is not a number (WHATWG "ends in a number")
    return ipaddress.IPv4Address(_ipv4_number(parts, host))


def _ipv4_number(parts: list[str], host: str) -> int:
    """The WHATWG IPv4 parser: up to four parts, each decimal, ``0x`` hex or ``0`` octal;
    the last part fills the remaining bytes."""
    if len(parts) > 4 or not all(_NUMBER.fullmatch(part) for part in parts):
        raise ValueError(f"{host} is not a valid IPv4 address")
    numbers = [_part(part) for part in parts]
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        raise ValueError(f"{host} is not a valid IPv4 address")
    value = last
    for index, number in enumerate(numbers):
        value += number << (8 * (3 - index))
    return value


def _part(text: str) -> int:
    lowered = text.lower()
    if lowered.startswith("0x"):
        return int(lowered[2:] or "0", 16)
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8)
    return int(text)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, NAT64, Teredo)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress) -> str | None:
    """Why a fetch may not connect to ``address`` (``"loopback"``...); None when it may."""
    if isinstance(address, ipaddress.IPv6Address):
        for network, why in _V6_RANGES:
            if address in network:
                return why
        inner = embedded_ipv4(address)
        if inner is not None:
            why_inner = refusal(inner)
            return None if why_inner is None else f"{why_inner}, inside an IPv6 address"
    else:
        for v4, why in _V4_RANGES:
            if address in v4:
                return why
    return None if address.is_global else "reserved"


def allowed(host: str, port: int, patterns: Iterable[str]) -> bool:
    """Whether ``host:port`` matches one of ``[tools.web] allow_hosts``: ``host``,
    ``host:port`` or ``*.domain`` (a name under ``domain``, with or without a port)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        name, _, wanted = pattern.rpartition(":") if _has_port(pattern) else (pattern, "", "")
        if wanted and int(wanted) != port:
            continue
        name = name.strip("[]") if name.startswith("[") else name
        if name.startswith("*."):
            if host.endswith(name[1:]):
                return True
        elif host == name:
            return True
    return False


def _has_port(pattern: str) -> bool:
    if pattern.startswith("["):
        return "]:" in pattern
    return pattern.count(":") == 1


__all__ = ["IPAddress", "allowed", "embedded_ipv4", "literal_address", "refusal"]

"""Which addresses a fetch may connect to: pure functions over ``ipaddress``.

Refused unless the host is allowed by name: loopback, private, link-local, CGNAT
(100.64/10), unique-local (fc00::/7), multicast, ``0.0.0.0/8`` and every other range
IANA's special-purpose registries call not globally reachable (toolwire's own table,
``ranges``), IPv6 outside ``2000::/3``, and the same IPv4 ranges inside IPv6 (mapped,
translated, compatible, 6to4, NAT64, Teredo). A literal host is read the way browsers and
``inet_aton`` read it (``2130706433``, ``0x7f.1``, ``0177.0.0.1``), so no spelling of
``127.0.0.1`` gets past.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final, TypeAlias

from toolwire.web.ranges import (
    GLOBAL_UNICAST,
    V4_REACHABLE,
    V4_REFUSED,
    V6_REACHABLE,
    V6_REFUSED,
)

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

_TRANSLATED: Final = ipaddress.IPv6Network("::ffff:0:0:0/96")
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
    """The IPv4 address an IPv6 one carries: mapped (``::ffff:a.b.c.d``), translated
    (``::ffff:0:a.b.c.d``), compatible, NAT64 (``64:ff9b::/96``), 6to4 and Teredo."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _TRANSLATED or address in _NAT64:
        return low
    if address in _COMPATIBLE and int(address) > 1:
        return low
    return None


def refusal(address: IPAddress) -> str | None:
    """Why a fetch may not connect to ``address`` (``"loopback"``...); None when it may.
    toolwire's own table (``ranges``), never ``ipaddress.is_global``."""
    if isinstance(address, ipaddress.IPv4Address):
        if any(address in net for net in V4_REACHABLE):
            return None
        return next((why for net, why in V4_REFUSED if address in net), None)
    inner = embedded_ipv4(address)
    if inner is not None:
        why_inner = refusal(inner)
        if why_inner is not None:
            return f"{why_inner}, inside an IPv6 address"
        if address in _NAT64:
            return None  # globally reachable by the registry: a public IPv4 address
    if any(address in net for net in V6_REACHABLE):
        return None
    found = next((why for net, why in V6_REFUSED if address in net), None)
    if found is None and address not in GLOBAL_UNICAST:
        return "reserved (outside 2000::/3)"
    return found


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

"""toolwire's own table of the address ranges no fetch may reach.

Built from IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the
RFCs since), plus multicast and the deprecated site-local range: every block whose
"Globally Reachable" is False, and the blocks that are not reachable at all (6to4 relay
anycast, reserved space). The verdict never depends on the interpreter:
``ipaddress.is_global`` changed between Python patch releases (CVE-2024-4032), and
still calls ``192.88.99.0/24``, ``5f00::/16`` or ``3fff::/20`` global.

A few small blocks inside refused ones are globally reachable by the registry (anycast
services such as PCP and TURN, AS112): those are listed apart and allowed.
"""

from __future__ import annotations

import ipaddress
from typing import Final

_V4: Final = (
    ("0.0.0.0/8", "this-network (0.0.0.0/8)"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared CGNAT (100.64.0.0/10)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.88.99.0/24", "6to4 relay anycast (192.88.99.0/24)"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "limited broadcast"),
    ("240.0.0.0/4", "reserved (240.0.0.0/4)"),
)
_V4_REACHABLE: Final = ("192.0.0.9/32", "192.0.0.10/32")
_V6: Final = (
    ("::1/128", "loopback"),
    ("::/128", "unspecified"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only (100::/64)"),
    ("100:0:0:1::/64", "dummy prefix (100:0:0:1::/64)"),
    ("2001::/23", "IETF protocol assignments (2001::/23)"),
    ("2001:db8::/32", "documentation (2001:db8::/32)"),
    ("3fff::/20", "documentation (3fff::/20)"),
    ("5f00::/16", "segment-routing SIDs (5f00::/16)"),
    ("fc00::/7", "unique-local (fc00::/7)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
)
_V6_REACHABLE: Final = (
    "2001:1::1/128",
    "2001:1::2/128",
    "2001:1::3/128",
    "2001:3::/32",
    "2001:4:112::/48",
    "2001:20::/28",
    "2001:30::/28",
)
#: Global unicast: no other IPv6 space is routed on the internet today.
GLOBAL_UNICAST: Final = ipaddress.IPv6Network("2000::/3")

V4_REFUSED: Final = tuple((ipaddress.IPv4Network(net), why) for net, why in _V4)
V4_REACHABLE: Final = tuple(ipaddress.IPv4Network(net) for net in _V4_REACHABLE)
V6_REFUSED: Final = tuple((ipaddress.IPv6Network(net), why) for net, why in _V6)
V6_REACHABLE: Final = tuple(ipaddress.IPv6Network(net) for net in _V6_REACHABLE)

__all__ = ["GLOBAL_UNICAST", "V4_REACHABLE", "V4_REFUSED", "V6_REACHABLE", "V6_REFUSED"]

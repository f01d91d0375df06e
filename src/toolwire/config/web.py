"""``[tools.web]``: what the agent's web tools may reach and how long they may take.

The defaults refuse every address that is not public (docs/agent.md, "WebFetch"):
``allow_hosts`` opens named hosts again (an intranet's docs), ``resolve`` pins a name to
an address the way curl's ``--resolve`` does (tests, split-horizon DNS). The checks here
are only of shape; ``toolwire.web`` decides what an address may be.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator

DEFAULT_WEB_TIMEOUT: Final = 30.0
DEFAULT_WEB_MAX_BYTES: Final = 5_000_000

# A host name label, with an optional leading "*." and an optional ":port"; or a
# bracketed IPv6 literal with an optional port.
_HOST_PATTERN = re.compile(
    r"(\*\.)?([A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?\.)*[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?"
    r"(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?"
)
_HOST_NAME = re.compile(r"[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]")

HostPattern = Annotated[str, Field(min_length=1)]


class WebConfig(BaseModel):
    """``[tools.web]``: ``WebFetch``'s reach, deadline and size cap."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    allow_hosts: list[HostPattern] = Field(
        default_factory=list, description='a list of host patterns ("docs.corp", "*.corp:8080")'
    )
    """Hosts fetched even when they resolve to a refused (private, loopback...) address:
    ``host``, ``host:port`` or ``*.domain`` (any name under it)."""
    resolve: dict[str, str] = Field(default_factory=dict, description='a table of host = "address"')
    """Names pinned to an address instead of asking DNS (``{"docs.corp" = "10.0.0.7"}``).
    The address is vetted like a resolved one."""
    timeout: PositiveFloat = DEFAULT_WEB_TIMEOUT
    """Seconds one fetch may take in all: connect, headers, body and redirects."""
    max_bytes: PositiveInt = DEFAULT_WEB_MAX_BYTES
    """Body bytes read per fetch; the rest is never read."""

    @field_validator("allow_hosts")
    @classmethod
    def _patterns(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if not _HOST_PATTERN.fullmatch(pattern):
                raise ValueError(
                    f"tools.web.allow_hosts: {pattern!r} is not a host pattern; write "
                    '"host", "host:port" or "*.domain" (no scheme, no path)'
                )
        return [pattern.lower() for pattern in patterns]

    @field_validator("resolve")
    @classmethod
    def _addresses(cls, pins: dict[str, str]) -> dict[str, str]:
        for host, address in pins.items():
            if not _HOST_NAME.fullmatch(host):
                raise ValueError(f"tools.web.resolve: {host!r} is not a host name")
            try:
                ipaddress.ip_address(address.strip("[]"))
            except ValueError:
                raise ValueError(
                    f"tools.web.resolve: {host} = {address!r} is not an IP address"
                ) from None
        return {host.lower().strip("[]"): address.strip("[]") for host, address in pins.items()}


__all__ = ["DEFAULT_WEB_MAX_BYTES", "DEFAULT_WEB_TIMEOUT", "WebConfig"]

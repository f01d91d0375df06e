"""``[tools.web]``: what the agent's web tools may reach and how long they may take.

The defaults refuse every address that is not public (docs/agent.md, "WebFetch"):
``allow_hosts`` opens named hosts again (an intranet's docs), ``resolve`` pins a name to
an address the way curl's ``--resolve`` does (tests, split-horizon DNS). The checks here
are only of shape; ``toolwire.web`` decides what an address may be.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Final, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

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
SearchChoice = Literal["native", "searxng", "brave", "tavily"]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    search: SearchChoice | None = None
    """Who answers ``WebSearch``: ``searxng``, ``brave`` or ``tavily`` (toolwire asks
    them; the backend's own search is then not used), or ``native`` / unset: the
    backend's own search where its provider has one (docs/agent.md, "WebSearch")."""
    searxng_url: str | None = Field(default=None, min_length=1)
    """The SearXNG instance (``search = "searxng"``), e.g. ``http://127.0.0.1:8888``."""
    api_key_env: str | None = None
    """The variable holding the Brave or Tavily key (default ``BRAVE_API_KEY`` /
    ``TAVILY_API_KEY``)."""

    @field_validator("api_key_env")
    @classmethod
    def _variable(cls, name: str | None) -> str | None:
        if name is not None and not _ENV_NAME.fullmatch(name):
            raise ValueError(
                "tools.web.api_key_env must be the NAME of the environment variable "
                "holding the key (e.g. BRAVE_API_KEY), not the key itself"
            )
        return name

    @model_validator(mode="after")
    def _searxng_has_an_address(self) -> Self:
        if self.search == "searxng" and not self.searxng_url:
            raise ValueError(
                'search = "searxng" needs searxng_url = "http://HOST:PORT" (the instance)'
            )
        if self.searxng_url is not None and not self.searxng_url.startswith(
            ("http://", "https://")
        ):
            raise ValueError("tools.web.searxng_url must start with http:// or https://")
        return self

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


__all__ = ["DEFAULT_WEB_MAX_BYTES", "DEFAULT_WEB_TIMEOUT", "SearchChoice", "WebConfig"]

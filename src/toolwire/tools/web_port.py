"""The web port ``WebFetch`` gets pages through, and the page it gets.

Implemented by ``toolwire.web.Fetcher`` (the network lives there, above the tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page as text."""

    url: str
    """The final URL, after redirects."""
    requested: str
    status: int
    media_type: str
    text: str
    bytes_read: int
    truncated: bool
    """The body was longer than ``[tools.web] max_bytes``: only its start was read."""


class WebPort(Protocol):
    """Where ``WebFetch`` gets pages (``toolwire.web.Fetcher``)."""

    async def fetch(self, url: str) -> Page:
        """The page at ``url``; raises ``ToolError`` with a message for the model."""
        ...


__all__ = ["Page", "WebPort"]

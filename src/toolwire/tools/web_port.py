"""The web port ``WebFetch`` gets pages through, and the page it gets.

Implemented by ``toolwire.web.Fetcher`` (the network lives there, above the tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page as text.

    The text is kept as the parts it was decoded in, never joined: a 5 MB body decoded
    into one string would be a second copy of it while it is made, and the model only
    ever gets a window of it (``window``).
    """

    url: str
    """The final URL, after redirects."""
    requested: str
    status: int
    media_type: str
    parts: tuple[str, ...]
    bytes_read: int
    truncated: bool
    """The body was longer than ``[tools.web] max_bytes``: only its start was read."""

    @property
    def text(self) -> str:
        """The whole text (joined on each use: for small pages and tests)."""
        return "".join(self.parts)

    @property
    def length(self) -> int:
        """The text's length in characters."""
        return sum(map(len, self.parts))

    def window(self, start: int, stop: int) -> str:
        """``text[start:stop]`` without joining the rest."""
        found: list[str] = []
        at = 0
        for part in self.parts:
            end = at + len(part)
            if end > start and at < stop:
                found.append(part[max(start - at, 0) : stop - at])
            if end >= stop:
                break
            at = end
        return "".join(found)


class WebPort(Protocol):
    """Where ``WebFetch`` gets pages (``toolwire.web.Fetcher``)."""

    async def fetch(self, url: str) -> Page:
        """The page at ``url``; raises ``ToolError`` with a message for the model."""
        ...

    async def vet(self, url: str) -> None:
        """Raise the ``ToolError`` ``fetch`` would raise before any connection: a URL,
        host or address toolwire never fetches. Asked before the user is."""
        ...


__all__ = ["Page", "WebPort"]

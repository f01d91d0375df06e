"""The search port ``WebSearch`` asks, and the results it gets.

Implemented by ``toolwire.web.Searcher`` (SearXNG, Brave Search or Tavily: the network
lives there, above the tools).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolwire.updates.wire import resource_link_content


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit: what the model reads and the editor links to."""

    title: str
    url: str
    snippet: str = ""

    def to_acp(self) -> dict[str, Any]:
        """The ACP ``ToolCallContent`` item: a ``resource_link`` to the page."""
        return resource_link_content(self.url, self.title, self.snippet or None)


class SearchPort(Protocol):
    """Where ``WebSearch`` searches (``toolwire.web.Searcher``)."""

    @property
    def provider(self) -> str:
        """The provider as messages name it (``SearXNG``)."""
        ...

    async def search(
        self, query: str, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]:
        """The hits for ``query``; raises ``ToolError`` with one line for the model."""
        ...


__all__ = ["SearchPort", "SearchResult"]

"""The web tools' network side: search providers (``search``).

Use::

    from toolwire.web import SearchSettings, search
"""

from __future__ import annotations

from toolwire.web.search import (
    SEARCH_PROVIDERS,
    SearchError,
    SearchProvider,
    SearchResult,
    SearchSettings,
    search,
)

__all__ = [
    "SEARCH_PROVIDERS",
    "SearchError",
    "SearchProvider",
    "SearchResult",
    "SearchSettings",
    "search",
]

"""The network under the web tools: what a fetch may reach, the fetch itself, and the
search providers.

Use::

    fetcher = Fetcher(WebSettings.from_config(config.tools.web))
    ctx = ToolContext.create(cwd, web=fetcher)       # WebFetch fetches through it
    hits = await search(SearchSettings("searxng", searxng_url=url), "query", client=client)

``address`` is pure (which IP addresses are refused, how a literal host is read, the
``allow_hosts`` patterns); ``resolve`` resolves a hop once and picks a vetted address;
``dial`` connects to that address with httpcore2, keeping the URL's host for ``Host``
and TLS; ``fetch`` follows redirects under one deadline and one byte cap; ``cache`` keeps
pages within a byte limit; ``decode`` turns the body into text, and ``markup`` HTML into
Markdown (markdownify) in a thread, depth-capped and stoppable. ``search`` asks SearXNG,
Brave Search or Tavily, filters by domain on both sides, under one deadline and one cap.
"""

from __future__ import annotations

from toolwire.web.address import allowed, literal_address, refusal
from toolwire.web.errors import FetchError, RefusedError
from toolwire.web.fetch import CACHE_SECONDS, MAX_REDIRECTS, Fetcher, WebSettings
from toolwire.web.search import (
    SEARCH_PROVIDERS,
    Searcher,
    SearchError,
    SearchProvider,
    SearchResult,
    SearchSettings,
    search,
)

__all__ = [
    "CACHE_SECONDS",
    "MAX_REDIRECTS",
    "SEARCH_PROVIDERS",
    "FetchError",
    "Fetcher",
    "RefusedError",
    "SearchError",
    "SearchProvider",
    "SearchResult",
    "SearchSettings",
    "Searcher",
    "WebSettings",
    "allowed",
    "literal_address",
    "refusal",
    "search",
]

"""One adapter per search provider: the request it is sent and the results it answers.

Pure functions of the settings and the query; ``search.py`` does the I/O. Each adapter
builds a ``ProviderRequest`` and reads the provider's JSON body into ``SearchResult``s,
skipping entries without a URL rather than failing the whole answer.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from toolwire.tools.search_port import SearchResult

SearchProvider = Literal["searxng", "brave", "tavily"]
SEARCH_PROVIDERS: Final[tuple[SearchProvider, ...]] = ("searxng", "brave", "tavily")

BRAVE_URL: Final = "https://api.search.brave.com/res/v1/web/search"
TAVILY_URL: Final = "https://api.tavily.com/search"
DEFAULT_KEY_ENV: Final[dict[SearchProvider, str]] = {
    "brave": "BRAVE_API_KEY",
    "tavily": "TAVILY_API_KEY",
}
"""The variable a keyed provider reads when ``api_key_env`` is not set."""
NAMES: Final[dict[SearchProvider, str]] = {
    "searxng": "SearXNG",
    "brave": "Brave Search",
    "tavily": "Tavily",
}
_MAX_RESULTS: Final = 20  # Brave's ``count`` and Tavily's ``max_results`` stop at 20
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What is sent: ``params`` go in the query string, ``body`` (if any) as JSON."""

    method: Literal["GET", "POST"]
    url: str
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Query:
    """A search as the adapters see it; domains are already normalized."""

    text: str
    allowed: tuple[str, ...]
    blocked: tuple[str, ...]
    max_results: int
    key: str | None


def site_terms(query: Query) -> str:
    """The query with ``site:`` terms, for providers that take filters in the query."""
    terms = [query.text]
    if len(query.allowed) == 1:
        terms.append(f"site:{query.allowed[0]}")
    elif query.allowed:
        terms.append("(" + " OR ".join(f"site:{d}" for d in query.allowed) + ")")
    terms.extend(f"-site:{d}" for d in query.blocked)
    return " ".join(terms)


def searxng_request(query: Query, base_url: str) -> ProviderRequest:
    # format=json is refused (403) unless the instance lists json in search.formats.
    url = base_url.rstrip("/") + "/search"
    return ProviderRequest("GET", url, params={"q": site_terms(query), "format": "json"})


def brave_request(query: Query, url: str) -> ProviderRequest:
    count = str(min(query.max_results, _MAX_RESULTS))
    headers = {"Accept": "application/json", "X-Subscription-Token": query.key or ""}
    return ProviderRequest(
        "GET", url, params={"q": site_terms(query), "count": count}, headers=headers
    )


def tavily_request(query: Query, url: str) -> ProviderRequest:
    body: dict[str, Any] = {
        "query": query.text,
        "max_results": min(query.max_results, _MAX_RESULTS),
    }
    if query.allowed:
        body["include_domains"] = list(query.allowed)
    if query.blocked:
        body["exclude_domains"] = list(query.blocked)
    headers = {"Authorization": f"Bearer {query.key or ''}"}
    return ProviderRequest("POST", url, headers=headers, body=body)


def _entries(items: Any, snippet_key: str) -> list[SearchResult]:
    if not isinstance(items, list):
        raise ValueError("no results list")
    found = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url:
            continue
        title = item.get("title")
        snippet = item.get(snippet_key)
        found.append(
            SearchResult(
                title=_plain(title) if isinstance(title, str) and title else url,
                url=url,
                snippet=_plain(snippet) if isinstance(snippet, str) else "",
            )
        )
    return found


def _plain(text: str) -> str:
    # Brave marks the matched words with <strong>; the model and the editor want text.
    return " ".join(html.unescape(_TAG.sub("", text)).split())


def searxng_results(body: Any) -> list[SearchResult]:
    """``{"results": [{"title", "url", "content"}, ...]}``."""
    return _entries(body.get("results") if isinstance(body, Mapping) else None, "content")


def brave_results(body: Any) -> list[SearchResult]:
    """``{"web": {"results": [{"title", "url", "description"}, ...]}}``; an answer with
    no web section (nothing found) has no ``web`` key."""
    if not isinstance(body, Mapping) or body.get("type") not in (None, "search"):
        raise ValueError("not a web search answer")
    web = body.get("web") or {"results": []}
    return _entries(web.get("results") if isinstance(web, Mapping) else None, "description")


def tavily_results(body: Any) -> list[SearchResult]:
    """``{"results": [{"title", "url", "content", "score"}, ...]}``."""
    return _entries(body.get("results") if isinstance(body, Mapping) else None, "content")


READERS: Final[dict[SearchProvider, Callable[[Any], list[SearchResult]]]] = {
    "searxng": searxng_results,
    "brave": brave_results,
    "tavily": tavily_results,
}


def normalized(domains: Sequence[str]) -> tuple[str, ...]:
    """Domains as hosts: lowercased, without scheme, path, port or a leading ``*.``."""
    out: list[str] = []
    for raw in domains:
        host = raw.strip().lower()
        host = host.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
        host = host.split(":", 1)[0].removeprefix("*.").strip(".")
        if host and host not in out:
            out.append(host)
    return tuple(out)


def host_in(host: str, domains: Sequence[str]) -> bool:
    """``host`` is one of ``domains`` or a subdomain of one."""
    host = host.lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


__all__ = [
    "BRAVE_URL",
    "DEFAULT_KEY_ENV",
    "NAMES",
    "READERS",
    "SEARCH_PROVIDERS",
    "TAVILY_URL",
    "ProviderRequest",
    "Query",
    "SearchProvider",
    "SearchResult",
    "brave_request",
    "host_in",
    "normalized",
    "searxng_request",
    "site_terms",
    "tavily_request",
]

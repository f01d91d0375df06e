"""Web search over a configured provider: SearXNG, Brave Search or Tavily.

Use::

    settings = SearchSettings("searxng", searxng_url="http://127.0.0.1:8888")
    async with httpx2.AsyncClient() as client:
        hits = await search(settings, "httpx timeouts", allowed_domains=["python-httpx.org"],
                            blocked_domains=[], client=client)

Domain filters go to the provider (``site:`` terms for SearXNG and Brave,
``include_domains``/``exclude_domains`` for Tavily) and are applied again to what comes
back, since a provider or one of SearXNG's engines may ignore them. One deadline
(``timeout``) covers the whole exchange, and the answer is read up to ``MAX_ANSWER_BYTES``
(reading stops there: a larger answer is refused, never held). Every failure is a
``SearchError`` whose message is one line naming the provider and what to do, with the
key scrubbed out: an answer nested too deeply to parse, or a result whose URL cannot be
read (that result is left out), never ends the turn.

The provider is one the user configured (often a SearXNG on their own machine or
network), so its address is not vetted the way ``WebFetch`` vets the pages it reads.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx2

from toolwire.config.web import WebConfig
from toolwire.secrets import scrub
from toolwire.tools.errors import ToolError
from toolwire.web._providers import (
    BRAVE_URL,
    DEFAULT_KEY_ENV,
    NAMES,
    READERS,
    SEARCH_PROVIDERS,
    TAVILY_URL,
    ProviderRequest,
    Query,
    SearchProvider,
    SearchResult,
    brave_request,
    host_in,
    normalized,
    searxng_request,
    tavily_request,
)

DEFAULT_SEARCH_TIMEOUT = 30.0
DEFAULT_MAX_RESULTS = 10
MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""The most of a provider's answer read (ten results are a few kilobytes)."""


class SearchError(ToolError):
    """A search did not give results; the message is one line for the model and the user
    (a ``ToolError``: ``WebSearch`` answers the model with it and the turn goes on)."""


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Which provider, where, with which key (``[tools.web]``)."""

    provider: SearchProvider
    searxng_url: str | None = None
    """The SearXNG instance (``searxng`` only), e.g. ``http://127.0.0.1:8888``."""
    api_key_env: str | None = None
    """The variable holding the Brave or Tavily key (default ``BRAVE_API_KEY`` /
    ``TAVILY_API_KEY``)."""
    timeout: float = DEFAULT_SEARCH_TIMEOUT
    """Seconds for the whole exchange: connect, answer and body."""
    max_results: int = DEFAULT_MAX_RESULTS
    endpoint: str | None = None
    """Another URL for the Brave or Tavily API (a gateway; tests)."""

    @classmethod
    def from_config(cls, web: WebConfig) -> SearchSettings | None:
        """The provider ``[tools.web] search`` names; None when it names none (unset, or
        ``native``: only the backend's own search)."""
        if web.search is None or web.search == "native":
            return None
        return cls(web.search, web.searxng_url, web.api_key_env, web.timeout)

    def __post_init__(self) -> None:
        if self.provider not in SEARCH_PROVIDERS:
            raise ValueError(f"unknown search provider {self.provider!r}")

    @property
    def name(self) -> str:
        """The provider as messages name it."""
        return NAMES[self.provider]

    @property
    def key_env(self) -> str | None:
        """The variable the key is read from (None: SearXNG takes no key)."""
        return self.api_key_env or DEFAULT_KEY_ENV.get(self.provider)

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key from ``key_env`` (None when unset or not needed)."""
        if self.key_env is None:
            return None
        return (os.environ if environ is None else environ).get(self.key_env) or None


class Searcher:
    """``WebSearch``'s port (``toolwire.tools.SearchPort``): ``search`` over one client.

    ``client``: the one to use (the proxy's, a test's); by default one of its own, made
    at the first search and kept, closed by ``aclose``.
    """

    def __init__(
        self,
        settings: SearchSettings,
        client: httpx2.AsyncClient | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self._client = client
        self._owned = client is None
        self._environ = environ

    @property
    def provider(self) -> str:
        """The provider as messages name it."""
        return self.settings.name

    async def search(
        self, query: str, allowed_domains: Sequence[str], blocked_domains: Sequence[str]
    ) -> list[SearchResult]:
        """``search`` with these settings; ``SearchError`` (a ``ToolError``) on failure."""
        if self._client is None:
            self._client = httpx2.AsyncClient(follow_redirects=False)
        return await search(
            self.settings,
            query,
            allowed_domains=allowed_domains,
            blocked_domains=blocked_domains,
            client=self._client,
            environ=self._environ,
        )

    async def aclose(self) -> None:
        """Close the client this searcher made (never one it was given)."""
        if self._owned and self._client is not None:
            await self._client.aclose()
            self._client = None


async def search(
    settings: SearchSettings,
    query: str,
    *,
    allowed_domains: Sequence[str] = (),
    blocked_domains: Sequence[str] = (),
    client: httpx2.AsyncClient,
    environ: Mapping[str, str] | None = None,
) -> list[SearchResult]:
    """The provider's results for ``query``, filtered by domain, at most ``max_results``.

    Raises ``SearchError`` (one line) when the provider is not configured, unreachable,
    too slow, refuses the request or answers something else than results.
    """
    allowed, blocked = normalized(allowed_domains), normalized(blocked_domains)
    key = settings.api_key(environ)
    request = _request(settings, Query(query, allowed, blocked, settings.max_results, key))
    body = await _exchange(settings, request, client, key)
    try:
        answer = json.loads(body)
    except RecursionError:
        raise _error(settings, "answered with JSON nested too deeply to read") from None
    except ValueError:  # JSONDecodeError and UnicodeDecodeError too
        raise _error(settings, "answered with something other than JSON") from None
    try:
        results = READERS[settings.provider](answer)
    except ValueError:
        raise _error(settings, "answered with something other than search results") from None
    kept = [r for r in results if _passes(r.url, allowed, blocked)]
    return kept[: settings.max_results]


def _request(settings: SearchSettings, query: Query) -> ProviderRequest:
    if settings.provider == "searxng":
        if not settings.searxng_url:
            raise _error(settings, "has no address; set searxng_url in [tools.web]")
        return searxng_request(query, settings.searxng_url)
    if query.key is None:
        raise _error(settings, f"needs a key; export it in {settings.key_env}")
    if settings.provider == "brave":
        return brave_request(query, settings.endpoint or BRAVE_URL)
    return tavily_request(query, settings.endpoint or TAVILY_URL)


async def _exchange(
    settings: SearchSettings, request: ProviderRequest, client: httpx2.AsyncClient, key: str | None
) -> bytes:
    """The answer's body, at most ``MAX_ANSWER_BYTES`` of it (a ``SearchError`` past)."""
    try:
        async with asyncio.timeout(settings.timeout):
            return await _answer(settings, request, client)
    except (TimeoutError, httpx2.TimeoutException):
        raise _error(settings, f"did not answer within {settings.timeout:g} s; try again") from None
    except httpx2.HTTPError as exc:
        where = urlsplit(request.url).netloc
        detail = scrub(str(exc) or type(exc).__name__, [key])
        raise _error(settings, f"at {where} could not be reached ({detail})") from None


async def _answer(
    settings: SearchSettings, request: ProviderRequest, client: httpx2.AsyncClient
) -> bytes:
    async with client.stream(
        request.method,
        request.url,
        params=request.params,
        headers=request.headers,
        json=request.body,
        timeout=settings.timeout,
    ) as response:
        if response.status_code >= 400:
            raise _error(settings, _status_advice(settings, response.status_code))
        chunks, size = [], 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                limit = f"{MAX_ANSWER_BYTES // (1024 * 1024)} MB"
                raise _error(settings, f"answered more than {limit}; try a narrower query")
            chunks.append(chunk)
    return b"".join(chunks)


def _status_advice(settings: SearchSettings, status: int) -> str:
    if settings.provider == "searxng" and status == 403:
        return "refused JSON (HTTP 403); add json to search.formats in its settings.yml"
    if status in (401, 403):
        return f"refused the key (HTTP {status}); check the key in {settings.key_env}"
    if status == 429:
        return "is rate limiting (HTTP 429); wait, or check the plan's quota"
    return f"answered HTTP {status}; try again later"


def _error(settings: SearchSettings, what: str) -> SearchError:
    line = " ".join(f"{settings.name} {what}".split())
    return SearchError(scrub(line))  # keys are scrubbed where a detail could carry one


def _passes(url: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> bool:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:  # "http://[::1", a port that is no number: not a result to show
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if blocked and host_in(host, blocked):
        return False
    return not allowed or host_in(host, allowed)


__all__ = [
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_SEARCH_TIMEOUT",
    "MAX_ANSWER_BYTES",
    "SEARCH_PROVIDERS",
    "SearchError",
    "SearchProvider",
    "SearchResult",
    "SearchSettings",
    "Searcher",
    "search",
]

"""The search providers against fake servers on 127.0.0.1 that speak their documented
shapes: what each is sent, what comes back, domain filters, errors and the deadline."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from toolwire.web import SearchError, SearchResult, SearchSettings, search

pytestmark = pytest.mark.anyio

KEY = "brv-0123456789abcdef0123456789abcdef"


def _json(body: object, status: int = 200) -> Reply:
    return Reply(status, [json.dumps(body).encode()], content_type="application/json")


SEARXNG_BODY: dict[str, Any] = {
    "query": "httpx",
    "number_of_results": 3,
    "results": [
        {"title": "HTTPX", "url": "https://www.python-httpx.org/", "content": "A client."},
        {"title": "Elsewhere", "url": "https://blog.example.net/httpx", "content": "Post."},
        {"title": "Docs", "url": "https://docs.python-httpx.org/api/", "content": "API."},
    ],
}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


async def _search(
    settings: SearchSettings,
    query: str,
    allowed_domains: Sequence[str] = (),
    blocked_domains: Sequence[str] = (),
) -> list[SearchResult]:
    environ = {"BRAVE_API_KEY": KEY, "TAVILY_API_KEY": KEY}
    async with httpx2.AsyncClient() as client:
        return await search(
            settings,
            query,
            allowed_domains=allowed_domains,
            blocked_domains=blocked_domains,
            client=client,
            environ=environ,
        )


def _query(server: FakeServer) -> dict[str, list[str]]:
    return parse_qs(urlsplit(server.requests[-1].path).query)


async def test_searxng_is_asked_for_json_and_its_results_come_back(server: FakeServer) -> None:
    server.script(_json(SEARXNG_BODY))
    hits = await _search(SearchSettings("searxng", searxng_url=server.url + "/"), "httpx")
    assert urlsplit(server.requests[0].path).path == "/search"
    assert _query(server) == {"q": ["httpx"], "format": ["json"]}
    assert hits[0] == SearchResult("HTTPX", "https://www.python-httpx.org/", "A client.")
    assert [h.url for h in hits] == [r["url"] for r in SEARXNG_BODY["results"]]


async def test_domain_filters_reach_the_query_and_the_results(server: FakeServer) -> None:
    server.script(_json(SEARXNG_BODY), _json(SEARXNG_BODY))
    settings = SearchSettings("searxng", searxng_url=server.url)
    # The fake ignores site: terms, as some engines do: the filter after still holds.
    hits = await _search(settings, "httpx", allowed_domains=("https://python-httpx.org/",))
    assert _query(server)["q"] == ["httpx site:python-httpx.org"]
    assert [h.url for h in hits] == [
        "https://www.python-httpx.org/",
        "https://docs.python-httpx.org/api/",
    ]
    hits = await _search(settings, "httpx", blocked_domains=["docs.python-httpx.org", "x.org"])
    assert _query(server)["q"] == ["httpx -site:docs.python-httpx.org -site:x.org"]
    assert [h.title for h in hits] == ["HTTPX", "Elsewhere"]


async def test_brave_gets_its_token_header_and_plain_snippets(server: FakeServer) -> None:
    body = {
        "type": "search",
        "query": {"original": "acp"},
        "web": {
            "type": "search",
            "results": [
                {
                    "title": "Agent <strong>Client</strong> Protocol",
                    "url": "https://agentclientprotocol.com/",
                    "description": "The <strong>ACP</strong> spec &amp; SDKs.",
                },
                {"title": "no url"},
            ],
        },
    }
    server.script(_json(body))
    settings = SearchSettings("brave", endpoint=server.url + "/res/v1/web/search")
    hits = await _search(settings, "acp", allowed_domains=["a.com", "b.org"])
    sent = server.requests[0]
    assert sent.method == "GET"
    assert sent.headers["x-subscription-token"] == KEY
    assert sent.headers["accept"] == "application/json"
    assert _query(server) == {"q": ["acp (site:a.com OR site:b.org)"], "count": ["10"]}
    assert hits == []  # neither domain: filtered on our side
    server.script(_json(body))
    hits = await _search(settings, "acp")
    assert hits == [
        SearchResult(
            "Agent Client Protocol", "https://agentclientprotocol.com/", "The ACP spec & SDKs."
        )
    ]


async def test_brave_with_no_web_section_is_no_results(server: FakeServer) -> None:
    server.script(_json({"type": "search", "query": {"original": "zzqx"}}))
    settings = SearchSettings("brave", endpoint=server.url)
    assert await _search(settings, "zzqx") == []


async def test_tavily_gets_a_bearer_key_and_domain_lists(server: FakeServer) -> None:
    body = {
        "query": "acp",
        "results": [
            {
                "title": "ACP",
                "url": "https://agentclientprotocol.com/x",
                "content": "Spec.",
                "score": 0.9,
            },
            {"title": "Bad", "url": "https://spam.example/", "content": "Ads.", "score": 0.1},
        ],
    }
    server.script(_json(body))
    settings = SearchSettings("tavily", endpoint=server.url + "/search", max_results=3)
    hits = await _search(settings, "acp", blocked_domains=["spam.example"])
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/search")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.json() == {"query": "acp", "max_results": 3, "exclude_domains": ["spam.example"]}
    assert hits == [SearchResult("ACP", "https://agentclientprotocol.com/x", "Spec.")]


@pytest.mark.parametrize(
    ("provider", "status", "says"),
    [
        ("searxng", 403, "SearXNG refused JSON (HTTP 403); add json to search.formats"),
        ("brave", 401, "Brave Search refused the key (HTTP 401); check the key in BRAVE_API_KEY"),
        ("tavily", 429, "Tavily is rate limiting (HTTP 429)"),
        ("tavily", 502, "Tavily answered HTTP 502; try again later"),
    ],
)
async def test_a_refusal_is_one_line_naming_the_provider(
    server: FakeServer, provider: str, status: int, says: str
) -> None:
    server.script(_json({"detail": f"bad key {KEY}"}, status))
    settings = SearchSettings(provider, searxng_url=server.url, endpoint=server.url)  # type: ignore[arg-type]
    with pytest.raises(SearchError) as caught:
        await _search(settings, "q")
    assert str(caught.value).startswith(says)
    assert "\n" not in str(caught.value)
    assert KEY not in str(caught.value)


async def test_a_missing_key_or_address_says_what_to_set() -> None:
    async with httpx2.AsyncClient() as client:
        with pytest.raises(SearchError, match="Brave Search needs a key; export it in MY_KEY"):
            await search(
                SearchSettings("brave", api_key_env="MY_KEY"), "q", client=client, environ={}
            )
        with pytest.raises(SearchError, match="SearXNG has no address; set searxng_url"):
            await search(SearchSettings("searxng"), "q", client=client, environ={})


async def test_not_json_and_unreachable_are_one_line(server: FakeServer) -> None:
    server.script(Reply(200, [b"<html>login</html>"], content_type="text/html"))
    with pytest.raises(SearchError, match=r"^SearXNG answered with something other than JSON$"):
        await _search(SearchSettings("searxng", searxng_url=server.url), "q")
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(SearchError, match=r"^SearXNG at 127\.0\.0\.1:\d+ could not be reached"):
        await _search(SearchSettings("searxng", searxng_url=url), "q")


async def test_a_slow_provider_fails_at_the_deadline(server: FakeServer) -> None:
    # Headers, then one byte a second: no single read times out, the deadline does.
    body = json.dumps(SEARXNG_BODY).encode()
    server.script(Reply(200, [body[i : i + 1] for i in range(len(body))], chunk_delay=1.0))
    started = time.monotonic()
    with pytest.raises(SearchError, match=r"^SearXNG did not answer within 0\.5 s"):
        await _search(SearchSettings("searxng", searxng_url=server.url, timeout=0.5), "q")
    assert time.monotonic() - started < 1.5

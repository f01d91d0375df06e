"""Search answers that used to end the turn or swell the agent: each is one clear
``SearchError`` (a ``ToolError``: the turn goes on), or a result left out."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from toolwire.web import SearchError, SearchSettings, search

pytestmark = pytest.mark.anyio
#: The most of an answer read (``toolwire.web.search.MAX_ANSWER_BYTES``).
CAP = 4 * 1024 * 1024


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


async def _search(server: FakeServer) -> list[str]:
    settings = SearchSettings("searxng", searxng_url=server.url)
    async with httpx2.AsyncClient() as client:
        hits = await search(settings, "q", client=client)
    return [h.url for h in hits]


def _answer(*chunks: bytes) -> Reply:
    return Reply(200, list(chunks), content_type="application/json")


async def test_a_result_whose_url_cannot_be_read_is_left_out(server: FakeServer) -> None:
    results = [
        {"title": "Broken", "url": "http://[::1/page", "content": ""},
        {"title": "Good", "url": "https://example.org/", "content": ""},
    ]
    server.script(_answer(json.dumps({"results": results}).encode()))
    assert await _search(server) == ["https://example.org/"]


async def test_an_answer_nested_too_deeply_is_one_clear_error(server: FakeServer) -> None:
    server.script(_answer(b'{"results": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"))
    with pytest.raises(SearchError, match=r"^SearXNG answered with JSON nested too deeply"):
        await _search(server)


async def test_a_huge_answer_is_refused_at_the_cap_and_never_held(server: FakeServer) -> None:
    chunk = b" " * 65536  # 48 MB of it: twelve times the cap
    server.script(_answer(b'{"results": [', *[chunk] * 768, b"]}"))
    tracemalloc.start()
    try:
        with pytest.raises(SearchError, match=r"answered more than 4 MB"):
            await _search(server)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * CAP, f"{peak:,} bytes held at the peak"

"""Pages that used to stall or crash the agent: bounded in time, depth and memory.

A large page is made Markdown in a thread of its own while the event loop (every other
session) goes on; a cancel or the deadline returns at once and stops that thread. Deep
nesting and a charset that is no text encoding are read, or are this fetch's failure;
the page cache stays within its byte limit.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tests.web.servers import page, serve
from toolwire.web import Fetcher, FetchError, WebSettings

pytestmark = pytest.mark.anyio
PIN = (("site.test", "127.0.0.1"),)
#: A plain page of about 300 KB: a second or more of parsing on a busy machine.
BIG = b"<html><body>" + b"<p>Some words <a href='/x'>a link</a> and <b>bold</b>.</p>\n" * 5000
#: How soon a cancel or the deadline must return: on the loop, the whole conversion of
#: these pages (seconds of CPU) would run first. Generous, since the machine's cores may
#: be busy with other tests: the bound tells "at once" from "after the conversion".
PROMPT = 1.5


def fetcher(**kw: float) -> Fetcher:
    settings = WebSettings(allow_hosts=("site.test",), resolve=PIN, **kw)  # type: ignore[arg-type]
    return Fetcher(settings)


async def _ticks_while_converting(until: asyncio.Task[Any]) -> int:
    """How often the loop ran this coroutine while the page-conversion thread ran."""
    ticks = 0
    while not until.done():
        await asyncio.sleep(0.005)
        ticks += _converting()
    return ticks


def _converting() -> bool:
    return any(t.name == "toolwire-page" for t in threading.enumerate())


async def test_a_big_page_converts_while_the_loop_goes_on() -> None:
    async with serve({"/": page(BIG)}) as server:
        task = asyncio.create_task(fetcher().fetch(server.url()))
        ticks = await _ticks_while_converting(task)
        got = await task
    assert "a link" in got.text[:200]
    # Counted, not timed: a conversion on the loop leaves no tick (and no thread) at all.
    assert ticks >= 2, "the event loop did not run while the page converted"


async def test_a_cancel_returns_at_once_and_stops_the_conversion() -> None:
    async with serve({"/": page(BIG)}) as server:
        task = asyncio.create_task(fetcher().fetch(server.url()))
        while not _converting():  # the body is read; the conversion runs
            await asyncio.sleep(0.005)
            assert not task.done()
        began = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.perf_counter() - began < PROMPT
    for _ in range(100):  # the thread sees the stop at its next element
        if not _converting():
            break
        await asyncio.sleep(0.01)
    assert not _converting(), "the conversion went on after the cancel"


async def test_the_conversion_is_under_the_deadline() -> None:
    async with serve({"/": page(BIG * 4)}) as server:
        began = time.perf_counter()
        with pytest.raises(FetchError, match="Timed out"):
            await fetcher(timeout=0.3).fetch(server.url())
    assert time.perf_counter() - began < 0.3 + PROMPT


async def test_deep_nesting_is_read_as_text() -> None:
    deep = b"<div>" * 100_000 + b"deep inside" + b"</div>" * 100_000 + b"<p>after</p>"
    async with serve({"/": page(deep)}) as server:
        got = await fetcher().fetch(server.url())
    assert "deep inside" in got.text
    assert "after" in got.text


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<meta charset='rot13'><p>caf\xc3\xa9</p>", "text/html"),
        (b"<p>caf\xc3\xa9</p>", "text/html; charset=base64"),
        (b"caf\xc3\xa9", "text/plain; charset=rot13"),
    ],
)
async def test_a_charset_that_is_no_text_encoding_reads_as_utf8(
    body: bytes, content_type: str
) -> None:
    async with serve({"/": page(body, content_type)}) as server:
        got = await fetcher().fetch(server.url())
    assert "café" in got.text


async def test_the_page_cache_keeps_within_its_byte_limit() -> None:
    routes = {f"/{n}": page(b"<p>" + bytes([97 + n]) * 200_000 + b"</p>") for n in range(6)}
    web = Fetcher(WebSettings(allow_hosts=("site.test",), resolve=PIN), cache_bytes=500_000)
    async with serve(routes) as server:
        for n in range(6):
            await web.fetch(server.url(f"/{n}"))
            assert web.cached_bytes <= 500_000
        assert server.hits == [f"/{n}" for n in range(6)]
        await web.fetch(server.url("/5"))  # the most recent is kept
        await web.fetch(server.url("/0"))  # the oldest went first
    assert server.hits[6:] == ["/0"]

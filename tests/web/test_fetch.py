"""``Fetcher`` against servers on 127.0.0.1, names pinned with ``resolve``: what is
refused, the deadline, redirects, charsets, binary types and the cache."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.web.servers import Route, head, page, redirect, serve
from toolwire.web import CACHE_SECONDS, Fetcher, FetchError, RefusedError, WebSettings

pytestmark = pytest.mark.anyio
PIN = (("site.test", "127.0.0.1"),)


def fetcher(*, allow: tuple[str, ...] = ("site.test",), **kw: float) -> Fetcher:
    return Fetcher(WebSettings(allow_hosts=allow, resolve=PIN, **kw))  # type: ignore[arg-type]


async def test_a_name_pinned_to_loopback_is_refused_unless_allowed() -> None:
    async with serve({"/": page(b"<p>inside</p>")}) as server:
        with pytest.raises(RefusedError, match=r"127\.0\.0\.1 \(loopback\)"):
            await fetcher(allow=()).fetch(server.url())
        assert server.hits == []  # refused before any connection
        got = await fetcher().fetch(server.url())
    assert got.text == "inside\n"
    assert server.hits == ["/"]


async def test_a_name_in_another_script_is_sent_as_idna_and_its_path_encoded() -> None:
    path = "/stra%C3%9Fe?q=%C3%BC"
    async with serve({path: page(b"found", "text/plain")}) as server:
        settings = WebSettings(
            allow_hosts=("xn--bcher-kva.test",), resolve=(("xn--bcher-kva.test", "127.0.0.1"),)
        )
        got = await Fetcher(settings).fetch(f"http://bücher.test:{server.port}/straße?q=ü")
    assert got.text == "found"
    assert server.hits == [path]
    assert got.url == f"http://bücher.test:{server.port}/straße?q=ü"  # as the model wrote it


async def test_an_allowed_host_redirecting_to_a_refused_address_is_refused() -> None:
    async with serve({}) as server:
        server.routes["/"] = redirect(server.url("/secret", host="127.0.0.1"))
        server.routes["/secret"] = page(b"secret")
        with pytest.raises(RefusedError, match="loopback"):
            await fetcher().fetch(server.url())
    assert server.hits == ["/"]  # the hop to 127.0.0.1 never connected


async def test_redirects_are_followed_up_to_five() -> None:
    async with serve({}) as server:
        for n in range(7):
            server.routes[f"/{n}"] = redirect(f"/{n + 1}")
        server.routes["/7"] = page(b"end")
        server.routes["/a"] = redirect("/5")
        got = await fetcher().fetch(server.url("/a"))
        assert (got.url, got.requested) == (server.url("/7"), server.url("/a"))
        with pytest.raises(FetchError, match="Too many redirects"):
            await fetcher().fetch(server.url("/0"))


@pytest.mark.parametrize(
    "url", ["ftp://site.test/x", "file:///etc/passwd", "http://u:p@site.test/"]
)
async def test_only_plain_http_and_https(url: str) -> None:
    with pytest.raises(RefusedError):
        await fetcher().fetch(url)


async def test_a_trickling_server_fails_at_the_deadline() -> None:
    async def trickle(writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain"))
        while True:
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(1)

    async with serve({"/": trickle}) as server:
        began = time.monotonic()
        with pytest.raises(FetchError, match=r"Timed out: .* within 2 s"):
            await fetcher(timeout=2).fetch(server.url())
        took = time.monotonic() - began
        await asyncio.sleep(0.1)
        assert server.closed  # the socket was closed, not left to trickle on
    assert 2 <= took < 3, f"overshoot {took - 2:.3f} s"


def _route(body: bytes, content_type: str) -> dict[str, Route]:
    return {"/": page(body, content_type)}


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        ("café".encode("latin-1"), "text/plain; charset=ISO-8859-1", "café"),
        ('<meta charset="windows-1252"><p>€uro</p>'.encode("cp1252"), "text/html", "€uro\n"),
        (
            b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>'
            + "мир".encode("koi8-r")
            + b"</p>",
            "text/html",
            "мир\n",
        ),
        ("\ufeffnaïve".encode("utf-16-le"), "text/plain", "naïve"),
        ("naïve".encode("utf-8-sig"), "text/plain", "naïve"),
        (b"bad \xff byte", "text/plain", "bad \ufffd byte"),
        (b'{"a": 1}', "application/json", '{"a": 1}'),
    ],
)
async def test_charsets(body: bytes, content_type: str, expected: str) -> None:
    async with serve(_route(body, content_type)) as server:
        got = await fetcher().fetch(server.url())
    assert got.text == expected


async def test_a_binary_type_is_refused_with_its_name() -> None:
    async with serve(_route(b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")) as server:
        with pytest.raises(FetchError, match="The page is image/png, not text"):
            await fetcher().fetch(server.url())


async def test_a_page_is_cached_for_fifteen_minutes_by_its_final_url() -> None:
    now = [1000.0]
    cache = Fetcher(WebSettings(allow_hosts=("site.test",), resolve=PIN), clock=lambda: now[0])
    async with serve({"/": page(b"<p>one</p>")}) as server:
        server.routes["/old"] = redirect("/")
        assert (await cache.fetch(server.url("/old"))).text == "one\n"
        assert (await cache.fetch(server.url("/"))).text == "one\n"  # the final URL's entry
        assert (await cache.fetch(server.url("/old"))).text == "one\n"
        assert server.hits == ["/old", "/"]
        now[0] += CACHE_SECONDS + 1
        await cache.fetch(server.url("/"))
        assert server.hits == ["/old", "/", "/"]

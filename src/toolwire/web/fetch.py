"""``Fetcher``: one URL to one ``Page``, within one deadline and one byte budget.

Each hop (the URL, then up to ``MAX_REDIRECTS`` redirects) is resolved and vetted by
``resolve.target`` and dialled at the vetted address by ``dial.get``. The whole fetch
runs under one ``asyncio.timeout``: connect, headers, body and redirects together, so a
server trickling a byte a second cannot hold the turn past ``timeout``. The body is
counted as it streams and reading stops at ``max_bytes``: no more is held, ever. A
cancelled turn cancels the task, which closes the socket on its way out.

The body becomes text in a thread of its own (``decode``, ``markup``), still under the
deadline: the event loop, and every other session, goes on meanwhile, and a cancel or
the deadline stops the thread at its next element. Whatever the conversion fails with is
this fetch's ``FetchError``, never the turn's.

Pages are kept ``CACHE_SECONDS`` per process, by final URL (and the URL asked for), at
most ``CACHE_BYTES`` of text together (``cache``).
"""

from __future__ import annotations

import asyncio
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

import httpcore2

from toolwire import __version__
from toolwire.tools.threads import off_loop
from toolwire.tools.web_port import Page
from toolwire.web.cache import CACHE_BYTES, CACHE_SECONDS, PageCache
from toolwire.web.decode import decoded, is_html, refuse_binary
from toolwire.web.dial import get
from toolwire.web.errors import FetchError, RefusedError
from toolwire.web.markup import to_markdown
from toolwire.web.resolve import target

if TYPE_CHECKING:
    from toolwire.config.web import WebConfig

MAX_REDIRECTS: Final = 5
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_HEADERS: Final = [
    ("User-Agent", f"toolwire/{__version__} (WebFetch)"),
    ("Accept", "text/markdown, text/html;q=0.9, text/*;q=0.8, application/json;q=0.8, */*;q=0.1"),
    ("Accept-Encoding", "gzip, deflate"),
]
_CHUNK: Final = 65536


@dataclass(frozen=True, slots=True)
class WebSettings:
    """``[tools.web]`` as the fetcher uses it."""

    allow_hosts: tuple[str, ...] = ()
    resolve: tuple[tuple[str, str], ...] = ()
    timeout: float = 30.0
    max_bytes: int = 5_000_000

    @classmethod
    def from_config(cls, web: WebConfig) -> WebSettings:
        """The settings ``[tools.web]`` gives."""
        return cls(tuple(web.allow_hosts), tuple(web.resolve.items()), web.timeout, web.max_bytes)


@dataclass(slots=True)
class Fetcher:
    """Fetches pages for the ``WebFetch`` tool of every session of one process."""

    settings: WebSettings = field(default_factory=WebSettings)
    clock: Callable[[], float] = time.monotonic
    cache_bytes: int = CACHE_BYTES
    _cache: PageCache = field(init=False)

    def __post_init__(self) -> None:
        self._cache = PageCache(self.cache_bytes, clock=self.clock)

    async def fetch(self, url: str) -> Page:
        """The page at ``url``; ``FetchError`` (a ``ToolError``) when it cannot be had."""
        cached = self._cache.get(url)
        if cached is not None:
            return cached
        try:
            async with asyncio.timeout(self.settings.timeout):
                page = await self._follow(url)
        except TimeoutError:
            raise FetchError(
                f"Timed out: {url} did not arrive within {self.settings.timeout:g} s."
            ) from None
        self._cache.put(page, page.url, url)
        return page

    async def vet(self, url: str) -> None:
        """``RefusedError`` when ``url``'s first hop would be refused (``resolve.target``:
        the URL, its host, the addresses it resolves to); asked before the user is."""
        if self._cache.get(url) is not None:
            return
        try:
            async with asyncio.timeout(self.settings.timeout):
                await target(url, dict(self.settings.resolve), self.settings.allow_hosts)
        except TimeoutError:
            raise FetchError(f"Timed out resolving the host of {url}.") from None

    @property
    def cached_bytes(self) -> int:
        """The bytes of text the page cache holds."""
        return self._cache.total

    async def _follow(self, url: str) -> Page:
        pins = dict(self.settings.resolve)
        hops = [url]
        while True:
            hop = await target(hops[-1], pins, self.settings.allow_hosts)
            try:
                async with get(hop, _HEADERS) as response:
                    location = _location(response)
                    if location is None:
                        return await self._page(hops, response)
            except httpcore2.TimeoutException:
                raise TimeoutError from None
            except (httpcore2.NetworkError, httpcore2.ProtocolError) as exc:
                raise FetchError(
                    f"Could not fetch {hops[-1]}: {exc or type(exc).__name__}."
                ) from None
            if len(hops) > MAX_REDIRECTS:
                raise FetchError(f"Too many redirects (more than {MAX_REDIRECTS}) from {url}.")
            hops.append(urljoin(hops[-1], location))

    async def _page(self, hops: list[str], response: httpcore2.Response) -> Page:
        if response.status >= 400:
            reason = response.extensions.get("reason_phrase", b"")
            why = reason.decode("latin-1") if isinstance(reason, bytes) else ""
            raise FetchError(f"HTTP {response.status} {why}".rstrip() + f" from {hops[-1]}.")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
        refuse_binary(headers.get("content-type"))  # before a byte of the body is read
        body, truncated = await _read(response, headers.get("content-encoding"), self.settings)
        size = sum(map(len, body))
        parts, kind = await _converted(body, headers.get("content-type"), hops[-1])
        return Page(
            url=hops[-1],
            requested=hops[0],
            status=response.status,
            media_type=kind,
            parts=parts,
            bytes_read=size,
            truncated=truncated,
        )


async def _converted(
    body: list[bytes], content_type: str | None, url: str
) -> tuple[tuple[str, ...], str]:
    """The body's text (``decoded`` empties ``body``); HTML made Markdown off the event
    loop, the thread stopped on the way out (a cancel, the deadline)."""
    stop = threading.Event()
    try:
        parts, kind = decoded(body, content_type)
        if not is_html(kind):
            return parts, kind
        markdown = await off_loop(lambda: to_markdown("".join(parts), stop), "toolwire-page")
    except FetchError:
        raise
    except Exception as exc:  # a page the parser cannot take: this fetch fails, not the turn
        raise FetchError(f"Could not read the page at {url} ({type(exc).__name__}).") from None
    finally:
        stop.set()  # the thread stops at its next element
    return (markdown,), kind


def _location(response: httpcore2.Response) -> str | None:
    if response.status not in _REDIRECTS:
        return None
    for key, value in response.headers:
        if key.lower() == b"location":
            return value.decode("latin-1")
    return None


async def _read(
    response: httpcore2.Response, encoding: str | None, settings: WebSettings
) -> tuple[list[bytes], bool]:
    """At most ``max_bytes`` of the (decompressed) body, as the chunks it arrived in (one
    growing buffer would over-allocate past the cap), and whether more was left: the
    stream is left unread past the cap (the connection is closed, not drained)."""
    room = settings.max_bytes
    unzip = _decompressor(encoding)
    body: list[bytes] = []
    async for chunk in response.aiter_stream():
        data = chunk if unzip is None else _inflate(unzip, chunk, room + 1)
        if len(data) > room:
            body.append(data[:room])
            return body, True
        body.append(data)
        room -= len(data)
    return body, False


def _inflate(unzip: zlib._Decompress, chunk: bytes, most: int) -> bytes:
    """At most ``most`` bytes out of ``chunk``: a small gzip never becomes a large body."""
    data = unzip.decompress(chunk, most)
    while unzip.unconsumed_tail and len(data) < most:
        data += unzip.decompress(unzip.unconsumed_tail, most - len(data))
    return data


def _decompressor(encoding: str | None) -> zlib._Decompress | None:
    name = (encoding or "identity").strip().lower()
    if name in ("identity", ""):
        return None
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "deflate":
        return zlib.decompressobj()
    raise RefusedError(f"The server sent the body as {name}, which WebFetch does not decode.")


__all__ = ["CACHE_BYTES", "CACHE_SECONDS", "MAX_REDIRECTS", "Fetcher", "WebSettings"]

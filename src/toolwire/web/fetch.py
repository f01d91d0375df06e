"""``Fetcher``: one URL to one ``Page``, within one deadline and one byte budget.

Each hop (the URL, then up to ``MAX_REDIRECTS`` redirects) is resolved and vetted by
``resolve.target`` and dialled at the vetted address by ``dial.get``. The whole fetch
runs under one ``asyncio.timeout``: connect, headers, body and redirects together, so a
server trickling a byte a second cannot hold the turn past ``timeout``. The body is
counted as it streams and reading stops at ``max_bytes``: no more is held, ever. A
cancelled turn cancels the task, which closes the socket on its way out.

Pages are kept ``CACHE_SECONDS`` per process, by final URL (and the URL asked for).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

import httpcore2

from toolwire import __version__
from toolwire.tools.web_port import Page
from toolwire.web.decode import page_text, refuse_binary
from toolwire.web.dial import get
from toolwire.web.errors import FetchError, RefusedError
from toolwire.web.resolve import target

if TYPE_CHECKING:
    from toolwire.config.web import WebConfig

MAX_REDIRECTS: Final = 5
CACHE_SECONDS: Final = 15 * 60
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
    _cache: dict[str, tuple[float, Page]] = field(default_factory=dict)

    async def fetch(self, url: str) -> Page:
        """The page at ``url``; ``FetchError`` (a ``ToolError``) when it cannot be had."""
        cached = self._cached(url)
        if cached is not None:
            return cached
        try:
            async with asyncio.timeout(self.settings.timeout):
                page = await self._follow(url)
        except TimeoutError:
            raise FetchError(
                f"Timed out: {url} did not arrive within {self.settings.timeout:g} s."
            ) from None
        now = self.clock()
        self._cache[page.url] = self._cache[url] = (now, page)
        return page

    async def vet(self, url: str) -> None:
        """``RefusedError`` when ``url``'s first hop would be refused (``resolve.target``:
        the URL, its host, the addresses it resolves to); asked before the user is."""
        if self._cached(url) is not None:
            return
        try:
            async with asyncio.timeout(self.settings.timeout):
                await target(url, dict(self.settings.resolve), self.settings.allow_hosts)
        except TimeoutError:
            raise FetchError(f"Timed out resolving the host of {url}.") from None

    def _cached(self, url: str) -> Page | None:
        now = self.clock()
        for key, (at, _page) in list(self._cache.items()):
            if now - at > CACHE_SECONDS:
                del self._cache[key]
        entry = self._cache.get(url)
        return None if entry is None else entry[1]

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
        parts, kind = page_text(body, headers.get("content-type"))  # empties body
        return Page(
            url=hops[-1],
            requested=hops[0],
            status=response.status,
            media_type=kind,
            parts=parts,
            bytes_read=size,
            truncated=truncated,
        )


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


__all__ = ["CACHE_SECONDS", "MAX_REDIRECTS", "Fetcher", "WebSettings"]

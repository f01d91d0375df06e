"""The pages of one process, kept ``CACHE_SECONDS`` and within ``CACHE_BYTES`` together.

A page is found by its final URL and by the URL asked for (one page, counted once). When
a new page would take the total past the byte limit, the pages used least recently go
first; a page larger than the whole limit is not kept at all. The weight of a page is
the memory its text takes (``sys.getsizeof`` of each part: 1, 2 or 4 bytes a character).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from toolwire.tools.web_port import Page

CACHE_SECONDS: Final = 15 * 60
CACHE_BYTES: Final = 32 * 1024 * 1024


def weight(page: Page) -> int:
    """The bytes ``page``'s text holds in memory."""
    return sum(map(sys.getsizeof, page.parts))


@dataclass(slots=True)
class PageCache:
    """Pages by URL, least recently used first out (module doc)."""

    max_bytes: int = CACHE_BYTES
    seconds: float = CACHE_SECONDS
    clock: Callable[[], float] = time.monotonic
    total: int = 0
    """The bytes the kept pages hold."""
    _entries: OrderedDict[int, tuple[float, Page, int]] = field(default_factory=OrderedDict)
    _urls: dict[str, int] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def get(self, url: str) -> Page | None:
        """The page kept for ``url``, if it is still fresh (it becomes the most recent)."""
        self._expire()
        key = self._urls.get(url)
        if key is None:
            return None
        self._entries.move_to_end(key)
        return self._entries[key][1]

    def put(self, page: Page, *urls: str) -> None:
        """Keep ``page`` under each of ``urls``, making room for it."""
        size = weight(page)
        if size > self.max_bytes:
            return
        for url in urls:
            self._drop_url(url)
        while self._entries and self.total + size > self.max_bytes:
            self._drop(next(iter(self._entries)))
        key = next(self._ids)
        self._entries[key] = (self.clock(), page, size)
        self.total += size
        self._urls.update(dict.fromkeys(urls, key))

    def _expire(self) -> None:
        now = self.clock()
        stale = [k for k, (at, _, _) in self._entries.items() if now - at > self.seconds]
        for key in stale:
            self._drop(key)

    def _drop_url(self, url: str) -> None:
        key = self._urls.pop(url, None)
        if key is not None and key not in self._urls.values():
            self._drop(key)

    def _drop(self, key: int) -> None:
        _, _, size = self._entries.pop(key)
        self.total -= size
        for url in [u for u, k in self._urls.items() if k == key]:
            del self._urls[url]


__all__ = ["CACHE_BYTES", "CACHE_SECONDS", "PageCache", "weight"]

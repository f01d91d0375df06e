"""The tree and the converter behind ``toolwire.web.markup`` (see there), loaded with the
first page converted."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from toolwire.web.bounds import MAX_DEPTH, NOISE, check


class _Soup(BeautifulSoup):
    """A tree no deeper than ``MAX_DEPTH``, built while ``stop`` is not set."""

    def __init__(self, html: str, stop: threading.Event) -> None:
        self._stop = stop
        self._left_out: Counter[str] = Counter()  # open elements not built, by name
        super().__init__(html, "html.parser")

    def handle_starttag(self, name: str, *args: Any, **kwargs: Any) -> Any:
        check(self._stop)
        if len(self.tagStack) > MAX_DEPTH:
            self._left_out[name] += 1
            return None
        return super().handle_starttag(name, *args, **kwargs)

    def handle_endtag(self, name: str, nsprefix: str | None = None) -> None:
        if self._left_out[name] > 0:
            self._left_out[name] -= 1
            return
        super().handle_endtag(name, nsprefix)


class _Converter(MarkdownConverter):
    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop
        super().__init__(heading_style="ATX", bullets="-")

    def process_tag(self, node: Any, parent_tags: Any = None) -> Any:
        check(self._stop)
        return super().process_tag(node, parent_tags)  # type: ignore[misc]  # not in its stub


def converted(html: str, stop: threading.Event) -> str:
    """``html`` as Markdown without its ``NOISE``; ``Halted`` once ``stop`` is set."""
    soup = _Soup(html, stop)
    for element in soup.find_all(NOISE):
        element.decompose()
    return str(_Converter(stop).convert_soup(soup))

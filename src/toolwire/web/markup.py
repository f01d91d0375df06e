"""HTML to Markdown, bounded in depth and stoppable: what a hostile page cannot turn into
a crash or a stuck thread.

BeautifulSoup (``html.parser``) builds the tree and markdownify walks it, recursing once
per level. So the tree is never built deeper than ``MAX_DEPTH`` elements: an element
opened deeper is left out (its text stays, in the element above), and its end tag with
it. 100,000 nested ``<div>``s read as text, not as a ``RecursionError``.

Both steps are plain Python, seconds of CPU for a page of a few megabytes, so the fetch
runs them in a thread of their own (``Fetcher``); they look at a ``threading.Event``
at every element and stop (``Halted``) once it is set: a cancelled or timed-out fetch
leaves no thread converting a page nobody waits for.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any, Final

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

#: Elements that are never the page's text.
NOISE: Final = ("script", "style", "noscript", "template", "nav", "iframe", "svg", "form")
#: Deepest nesting of elements kept (pages nest a few dozen deep).
MAX_DEPTH: Final = 200
_BLANK_LINES = re.compile(r"\n{3,}")


class Halted(Exception):  # noqa: N818 - not an error: the caller asked for it
    """The conversion was stopped (its fetch was cancelled or timed out)."""


def _check(stop: threading.Event) -> None:
    """Between two elements: ``Halted`` once ``stop`` is set."""
    if stop.is_set():
        raise Halted


class _Soup(BeautifulSoup):
    """A tree no deeper than ``MAX_DEPTH``, built while ``stop`` is not set."""

    def __init__(self, html: str, stop: threading.Event) -> None:
        self._stop = stop
        self._left_out: Counter[str] = Counter()  # open elements not built, by name
        super().__init__(html, "html.parser")

    def handle_starttag(self, name: str, *args: Any, **kwargs: Any) -> Any:
        _check(self._stop)
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
        _check(self._stop)
        return super().process_tag(node, parent_tags)  # type: ignore[misc]  # not in its stub


def to_markdown(html: str, stop: threading.Event | None = None) -> str:
    """HTML as Markdown, without its noise (``NOISE``) and runs of blank lines; ``Halted``
    once ``stop`` is set."""
    stop = stop or threading.Event()
    soup = _Soup(html, stop)
    for element in soup.find_all(NOISE):
        element.decompose()
    markdown = _Converter(stop).convert_soup(soup)
    return _BLANK_LINES.sub("\n\n", markdown).strip() + "\n"


__all__ = ["MAX_DEPTH", "NOISE", "Halted", "to_markdown"]

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

The two libraries load with the first page (``toolwire.web._soup``): some 80 ms of
imports that an agent whose model never fetches a page does not pay at start-up.
"""

from __future__ import annotations

import re
import threading

from toolwire.web.bounds import MAX_DEPTH, NOISE, Halted

_BLANK_LINES = re.compile(r"\n{3,}")


def to_markdown(html: str, stop: threading.Event | None = None) -> str:
    """HTML as Markdown, without its noise (``NOISE``) and runs of blank lines; ``Halted``
    once ``stop`` is set."""
    from toolwire.web._soup import converted

    markdown = converted(html, stop or threading.Event())
    return _BLANK_LINES.sub("\n\n", markdown).strip() + "\n"


__all__ = ["MAX_DEPTH", "NOISE", "Halted", "to_markdown"]

"""What bounds a page's conversion (``toolwire.web.markup``): the elements left out, the
deepest nesting kept, and the stop a cancelled fetch sets. Apart from the converter so the
converter's libraries load with the first page."""

from __future__ import annotations

import threading
from typing import Final

#: Elements that are never the page's text.
NOISE: Final = ("script", "style", "noscript", "template", "nav", "iframe", "svg", "form")
#: Deepest nesting of elements kept (pages nest a few dozen deep).
MAX_DEPTH: Final = 200


class Halted(Exception):  # noqa: N818 - not an error: the caller asked for it
    """The conversion was stopped (its fetch was cancelled or timed out)."""


def check(stop: threading.Event) -> None:
    """Between two elements: ``Halted`` once ``stop`` is set."""
    if stop.is_set():
        raise Halted

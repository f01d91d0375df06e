"""Whether the text shown so far is inside a Markdown code fence.

A bare call form (a JSON object, a Python list) inside a fenced block is an example the
model shows, not a call it makes. The decoders that read bare forms feed this tracker the
text they show; it sees a line that starts with ```` ``` ```` (or ``~~~``) open or close a
fence. Pieces may split a line anywhere: only the first three characters of the current
line are kept, so the work is linear in the text.
"""

from __future__ import annotations

_MARKS = ("```", "~~~")


class FenceTracker:
    """Feed it the shown text; ``inside`` says whether a fence is open at its end."""

    __slots__ = ("_head", "inside")

    def __init__(self) -> None:
        self.inside = False
        self._head: str | None = ""  # the current line's first chars; None once decided

    def feed(self, text: str) -> None:
        start = 0
        while True:
            nl = text.find("\n", start)
            piece = text[start:] if nl < 0 else text[start:nl]
            self._line(piece)
            if nl < 0:
                return
            self._head = ""  # a new line begins
            start = nl + 1

    def _line(self, piece: str) -> None:
        if self._head is None:
            return
        head = (self._head + piece[:3])[:3]
        if len(head) < 3:
            self._head = head
            return
        self._head = None
        if head in _MARKS:
            self.inside = not self.inside


__all__ = ["FenceTracker"]

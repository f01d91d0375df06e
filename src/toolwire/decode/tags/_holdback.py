"""Find tags in streamed text without leaking a tag that the next chunk would complete.

A model's text arrives in arbitrary pieces, so a buffer may end with ``<too`` that the
next piece turns into ``<tool>``. Emitting that suffix as text would leak markup; holding
back more than a possible tag prefix would delay visible text for nothing. This module is
the one place that draws the line:

* ``TagSet.scan`` finds the first complete tag at or after a cursor, or else the earliest
  position from which the rest of the buffer could still begin a tag. What lies before
  that position is safe to hand on; what lies after it is at most ``longest - 1`` chars.
* ``expect`` answers "which of these tags starts right here?" with yes, not yet, or no.

Both only look at text from the cursor on, and a decoder consumes everything before the
held-back suffix, so each character is scanned a bounded number of times (linear work).

Tag sets are small and chosen so that a partial tag can only sit at the buffer's end:
every tag of a set begins with a character found nowhere else in the set's tags
(``]]>`` and ``-->`` are alone in theirs). Leftmost-match is then independent of chunking.
"""

from __future__ import annotations

import re

_WS = re.compile(r"[ \t\r\n]*")
"""XML's (and JSON's) whitespace; Python's ``str.isspace`` also matches control chars."""

SPACE = " \t\r\n"


class TagSet:
    """A fixed set of literal tags searched for together."""

    __slots__ = ("_prefixes", "_re", "longest", "tags")

    def __init__(self, *tags: str) -> None:
        # Longest first, so that the regex prefers ``<![CDATA[`` over ``<`` at one spot.
        ordered = sorted(set(tags), key=lambda t: (-len(t), t))
        self.tags: tuple[str, ...] = tuple(ordered)
        self.longest = len(ordered[0])
        self._re = re.compile("|".join(re.escape(t) for t in ordered))
        self._prefixes = frozenset(t[:k] for t in ordered for k in range(1, len(t)))

    def scan(self, buf: str, pos: int) -> tuple[int, str | None]:
        """The first tag at or after ``pos``: ``(start, tag)``.

        When no complete tag is found, ``(hold, None)``: ``buf[pos:hold]`` cannot be part of
        a tag and ``buf[hold:]`` (shorter than the longest tag) might begin one.
        """
        m = self._re.search(buf, pos)
        if m is None:
            return self.holdback(buf, pos), None
        start = m.start()
        # A short tag (``<``) at the very end may be the beginning of a longer one
        # (``<![CDATA[``): wait for the characters that decide.
        if len(buf) - start < self.longest and buf[start:] in self._prefixes:
            return start, None
        return start, m.group()

    def holdback(self, buf: str, pos: int) -> int:
        """Earliest index >= ``pos`` from which ``buf`` could still begin one of the tags."""
        for i in range(max(pos, len(buf) - self.longest + 1), len(buf)):
            if buf[i:] in self._prefixes:
                return i
        return len(buf)


def expect(buf: str, pos: int, options: tuple[str, ...]) -> str | None:
    """Which of ``options`` starts at ``pos``.

    Returns the option; ``""`` when the buffer ends before one could be ruled out (wait for
    more text); ``None`` when none of them can start there.
    """
    for opt in options:
        if buf.startswith(opt, pos):
            return opt
    rest = len(buf) - pos
    for opt in options:
        if rest < len(opt) and opt.startswith(buf[pos:]):
            return ""
    return None


def skip_space(buf: str, pos: int) -> int:
    """Index of the first non-whitespace character at or after ``pos``."""
    return _WS.match(buf, pos).end()  # type: ignore[union-attr]  # always matches


__all__ = ["SPACE", "TagSet", "expect", "skip_space"]

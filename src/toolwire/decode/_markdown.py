"""Where a model's Markdown shows code: inline code spans and fenced blocks, as they stream.

The rescue (``rescue.py``) must not take a call format that a model quotes as code for a
call: a fenced example of the markup, or ``<tool_call>`` in backticks, is text. This
scanner splits streamed text into pieces that are *inert* (inside code) or not, the same
pieces whatever the chunking: a run of backticks or tildes at the end of what arrived, or
the start of a line inside a fence, is held until the next text decides it.

The rules are a conservative reading of CommonMark (a false "inert" only costs a missed
rescue, a false "not inert" could cost a false call):

* a line that starts (after at most three spaces) with three or more backticks or tildes
  opens a fence; a line that starts the same way with at least as many of the same
  character closes it; the fence lines and everything between them are inert;
* elsewhere, a run of N backticks opens a code span that ends after the next run of
  exactly N backticks, or at the end of the line (an unmatched backtick makes the rest of
  its line inert).
"""

from __future__ import annotations

import re

_NORMAL_STOP = re.compile(r"[`~\n]")
_SPAN_STOP = re.compile(r"[`\n]")
_FENCE_LINE = re.compile(r" {0,3}(`+|~+)")
_FENCE_PART = re.compile(r" {0,3}(`*|~*)")

Piece = tuple[str, bool]
"""A piece of the text and whether it is inert (inside code)."""


class Markdown:
    """``split(text)`` -> pieces decided so far; ``flush()`` -> the rest."""

    def __init__(self) -> None:
        self._buf = ""
        self._pos = 0
        self._out: list[Piece] = []
        self._span = 0  # the backtick run that opened the current code span
        self._fence = ""  # the run that opened the current fence ("" outside one)
        self._indent = 0  # spaces since the line began; -1: the line has other text
        self._bol = True  # the cursor is at the start of a line

    def split(self, text: str) -> list[Piece]:
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        while self._step():
            pass
        return self._take()

    def flush(self) -> list[Piece]:
        """The held tail, as it stands (the text ended)."""
        rest = self._buf[self._pos :]
        if rest:
            self._out.append((rest, bool(self._span or self._fence)))
        self._buf, self._pos = "", 0
        return self._take()

    def reset(self) -> None:
        """Leave any code: what a call carries says nothing about the prose around it."""
        self._span, self._fence, self._indent, self._bol = 0, "", -1, False

    def _take(self) -> list[Piece]:
        out, self._out = self._out, []
        return out

    def _piece(self, end: int, *, inert: bool) -> None:
        if end > self._pos:
            text = self._buf[self._pos : end]
            if self._out and self._out[-1][1] == inert:  # fewer, longer pieces
                self._out[-1] = (self._out[-1][0] + text, inert)
            else:
                self._out.append((text, inert))
            self._bol = text.endswith("\n")
            at = text.rfind("\n")
            tail = text[at + 1 :]
            base = 0 if at >= 0 else self._indent
            if base < 0 or tail.strip(" "):
                self._indent = -1
            else:
                self._indent = base + len(tail)
            self._pos = end

    def _prose(self, end: int) -> None:
        self._piece(end, inert=False)

    def _code(self, end: int) -> None:
        self._piece(end, inert=True)

    def _step(self) -> bool:
        if self._fence:
            return self._in_fence()
        if self._span:
            return self._in_span()
        return self._in_text()

    def _run(self, at: int) -> int | None:
        """The end of the run of the character at ``at``; None while it may go on."""
        ch = self._buf[at]
        end = at
        while end < len(self._buf) and self._buf[end] == ch:
            end += 1
        return None if end == len(self._buf) else end

    def _in_text(self) -> bool:
        m = _NORMAL_STOP.search(self._buf, self._pos)
        if m is None:
            self._prose(len(self._buf))
            return False
        at = m.start()
        self._prose(at)
        if m.group() == "\n":
            self._prose(at + 1)
            return True
        end = self._run(at)
        if end is None:
            return False
        run = self._buf[at:end]
        if 0 <= self._indent <= 3 and len(run) >= 3:
            self._fence = run
            self._code(end)
        elif run[0] == "`":
            self._span = len(run)
            self._code(end)
        else:
            self._prose(end)
        return True

    def _in_span(self) -> bool:
        m = _SPAN_STOP.search(self._buf, self._pos)
        if m is None:
            self._code(len(self._buf))
            return False
        at = m.start()
        if m.group() == "\n":
            self._code(at)
            self._span = 0
            return True
        end = self._run(at)
        if end is None:
            self._code(at)
            return False
        if end - at == self._span:
            self._span = 0
        self._code(end)
        return True

    def _in_fence(self) -> bool:
        if self._bol:
            part = _FENCE_PART.match(self._buf, self._pos)
            assert part is not None  # the pattern matches the empty string
            if part.end() == len(self._buf):
                return False  # this line's start may still close the fence
            m = _FENCE_LINE.match(self._buf, self._pos)
            run = m.group(1) if m else ""
            if m and run[0] == self._fence[0] and len(run) >= len(self._fence):
                self._fence = ""
                self._code(m.end())
                return True
        nl = self._buf.find("\n", self._pos)
        self._code(len(self._buf) if nl < 0 else nl + 1)
        return nl >= 0


def mask(text: str) -> str:
    """``text`` with everything but its line ends blanked: what the decoders see of code."""
    return re.sub(r"[^\n]", " ", text)


__all__ = ["Markdown", "Piece", "mask"]

"""Bounding what goes back to the model, and saying plainly what was cut.

A tool result is read by the model on every later turn of the conversation, so a huge
one costs on every request. Outputs are cut head + tail (the start says what ran, the
end says how it finished) with a marker naming how much was left out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable


def cut_marker(cut: int, unit: str = "characters") -> str:
    """The line that stands where ``cut`` units were left out."""
    return f"\n[... {cut:,} {unit} cut from the middle ...]\n"


def cap_middle(text: str, limit: int) -> str:
    """``text`` unchanged when it fits in ``limit`` characters, else head + marker + tail."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return text[:head] + cut_marker(len(text) - head - tail) + text[len(text) - tail :]


class OutputBuffer:
    """The head and tail of a stream of text, in bounded memory, and its total length.

    A command may print gigabytes; only the first ``head_limit`` and the last
    ``tail_limit`` characters are kept, which is what ``text()`` gives the model.
    """

    __slots__ = ("_head", "_head_limit", "_tail", "_tail_len", "_tail_limit", "total")

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0

    def append(self, chunk: str) -> None:
        """Add a chunk of output."""
        room = self._head_limit - min(self.total, self._head_limit)
        self.total += len(chunk)
        if room:
            self._head.append(chunk[:room])
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_len += len(chunk)
        while self._tail_len - len(self._tail[0]) >= self._tail_limit:
            self._tail_len -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        """True when some of the output is not kept."""
        return self.total > self._head_limit + self._tail_limit

    def text(self) -> str:
        """The kept output, with a marker where the middle was dropped."""
        head = "".join(self._head)
        tail = "".join(self._tail)
        if not self.truncated:
            return head + tail
        tail = tail[len(tail) - self._tail_limit :]
        return head + cut_marker(self.total - len(head) - len(tail)) + tail


def plural(count: int, word: str) -> str:
    """``"1 line"``, ``"2 lines"``."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def split_lines(text: str) -> list[str]:
    """Lines as editors number them: split on ``\n`` only, a trailing ``\r`` dropped.

    (``str.splitlines`` also splits on form feeds and Unicode separators, which would
    shift every later line number away from what the user's editor shows.)
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def numbered(lines: Iterable[str], first: int, max_line_chars: int) -> str:
    """Lines as ``cat -n`` prints them (number right-aligned in 6, a tab), long ones cut."""
    out = []
    for number, line in enumerate(lines, start=first):
        if len(line) > max_line_chars:
            line = line[:max_line_chars] + f" [... line cut at {max_line_chars:,} characters]"
        out.append(f"{number:>6}\t{line}")
    return "\n".join(out)


__all__ = ["OutputBuffer", "cap_middle", "cut_marker", "numbered", "plural", "split_lines"]

"""Text shapes of tool results: numbered lines, counted words.

(Outputs are capped head + tail by ``toolwire.updates.output``: a tool result is read by
the model on every later turn, so a huge one costs on every request.)
"""

from __future__ import annotations

from collections.abc import Iterable


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


__all__ = ["numbered", "plural", "split_lines"]

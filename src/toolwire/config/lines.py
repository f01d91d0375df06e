"""Which line of a TOML file a configuration error is about.

``tomllib`` keeps no positions, so the line is found again in the text: a plain scan of
the table headers (``[a.b]``, ``[[a]]``) and the ``key = value`` lines, dotted and quoted
keys included. Good enough to point at a key (multi-line strings may hide one; then the
line of its table is given).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_HEADER = re.compile(r"\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")


def key_line(text: str, path: Sequence[str]) -> int | None:
    """The 1-based line setting the key at ``path`` (or the table holding it), else the
    header of the deepest table on its way; None when nothing of it is in ``text``."""
    table: tuple[str, ...] = ()
    best: tuple[int, int] | None = None  # (depth, line) of the deepest table header
    wanted = tuple(path)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = _HEADER.match(line)
        if header is not None:
            table = _parts(header.group(1))
            if wanted[: len(table)] == table and (best is None or len(table) > best[0]):
                best = (len(table), number)
            if table == wanted:
                return number
            continue
        key = _KEY.match(line)
        if key is not None:
            full = table + _parts(key.group(1))
            if full and wanted[: len(full)] == full:
                return number
    return None if best is None else best[1]


def toml_syntax(message: str) -> tuple[int | None, str]:
    """``tomllib``'s error message: its line, and the message without ``(at line...)``."""
    found = _TOML_AT.search(message)
    if found is None:
        return None, message
    rest = message[: found.start()] + f" (column {found.group(2)})" + message[found.end() :]
    return int(found.group(1)), rest


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(
        part.strip().strip("\"'") for part in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', dotted)
    )


__all__ = ["key_line", "toml_syntax"]

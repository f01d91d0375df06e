"""What a handoff carries of a session's tool work: the numbers of a switch notice.

Counted over every tool item before the switch, not only those in the block: a notice
that counted the block alone said "0 files read, 0 commands" for a session whose work
sat in the verbatim tail, or had been superseded. Files read and changed are distinct
paths (a file read three times was read); commands and other tools are calls. An item
goes on verbatim when it is in the block (whole or cut) or in the verbatim tail; the
rest reach the new model only through the summary, or not at all without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolwire.handoff.build import ItemReport
from toolwire.handoff.extract import Category

_NAMES: dict[Category, tuple[str, str]] = {
    "read": ("file read", "files read"),
    "change": ("file changed", "files changed"),
    "command": ("command", "commands"),
    "other": ("other tool call", "other tool calls"),
}


@dataclass(frozen=True, slots=True)
class Carried:
    """One kind of tool work: how much the session did, how much goes on verbatim."""

    category: Category
    total: int
    verbatim: int


def carried(items: Sequence[ItemReport]) -> list[Carried]:
    """Per category (in ``_NAMES`` order), the session's count and the verbatim count."""
    done: dict[Category, set[object]] = {c: set() for c in _NAMES}
    kept: dict[Category, set[object]] = {c: set() for c in _NAMES}
    for report in items:
        item = report.item
        what = item.path if item.category in ("read", "change") and item.path else item.seq
        done[item.category].add(what)
        if report.status != "dropped":
            kept[item.category].add(what)
    return [Carried(c, len(done[c]), len(kept[c])) for c in _NAMES]


def describe_carried(items: Sequence[ItemReport], *, summarized: bool) -> str:
    """``6 files read, all verbatim; 2 files changed, 1 verbatim, 1 summarized; ...``."""
    rest = "summarized" if summarized else "left out"
    parts = []
    for each in carried(items):
        if not each.total:
            continue
        one, many = _NAMES[each.category]
        count = f"{each.total} {one if each.total == 1 else many}"
        if each.verbatim == each.total:
            parts.append(f"{count}, all verbatim")
        elif not each.verbatim:
            parts.append(f"{count}, {rest}")
        else:
            parts.append(f"{count}, {each.verbatim} verbatim, {each.total - each.verbatim} {rest}")
    return "; ".join(parts) or "no tool calls"


__all__ = ["Carried", "carried", "describe_carried"]

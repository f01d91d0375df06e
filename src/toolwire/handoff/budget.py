"""Fitting the kept tool items into the character budget, newest first.

Two limits (docs/design.md, "Backend switch: the handoff"): each item's content is capped at
``max_tool_result_chars``, cut in the middle with a visible ``[... N chars omitted ...]``
so the start and the end of a file or an output both survive; and the rendered tool
sections (headings, item headers, fences, contents) total at most
``max_tool_context_chars``. Items are placed from the newest back, because the latest
state matters most; an item that does not fit whole is cut further when a useful part
of it still fits, and dropped as ``over_budget`` otherwise, and older items still get
their chance. One huge file therefore costs at most one cap, never the whole budget.

Cost: an item's content is only ever sliced to its cap, never joined or copied whole,
and once the budget is spent the remaining items are not even formatted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolwire.handoff.dedupe import DropReason, Verdict
from toolwire.handoff.extract import Category, ToolItem
from toolwire.handoff.render import SECTION_HEADINGS, body_parts, format_item

MIN_BODY = 200
"""Below this many content characters a cut item says too little to be worth its header."""


@dataclass(frozen=True, slots=True)
class Placed:
    """An item after dedup and budget: its text in the block, or why it has none."""

    item: ToolItem
    verdict: Verdict
    text: str | None
    omitted: int = 0
    reason: DropReason | None = None


def marker(omitted: int) -> str:
    return f"\n[... {omitted} chars omitted ...]\n"


def cut_middle(parts: Sequence[str], cap: int) -> tuple[str, int]:
    """``parts`` joined and cut to at most ``cap`` characters (head + marker + tail).

    Returns the text and how many characters were left out. Cuts snap to a line break
    when one is near, so numbered file lines are not split. Only the kept characters are
    copied.
    """
    total = sum(len(p) for p in parts)
    if total <= cap:
        return "".join(parts), 0
    keep = max(0, cap - len(marker(total)))  # the widest marker this text can need
    head = _take_head(parts, (keep + 1) // 2)
    tail = _take_tail(parts, keep // 2)
    cut = head.rfind("\n")
    if cut >= len(head) * 3 // 4:
        head = head[: cut + 1]
    cut = tail.find("\n")
    if 0 <= cut < len(tail) // 4:
        tail = tail[cut + 1 :]
    omitted = total - len(head) - len(tail)
    return f"{head}{marker(omitted)}{tail}", omitted


def _take_head(parts: Sequence[str], n: int) -> str:
    out: list[str] = []
    for part in parts:
        if n <= 0:
            break
        out.append(part[:n])
        n -= len(out[-1])
    return "".join(out)


def _take_tail(parts: Sequence[str], n: int) -> str:
    out: list[str] = []
    for part in reversed(parts):
        if n <= 0:
            break
        out.append(part[-n:] if n < len(part) else part)
        n -= len(out[-1])
    return "".join(reversed(out))


def fit(
    candidates: Sequence[tuple[ToolItem, Verdict]], *, budget: int, per_item: int
) -> list[Placed]:
    """Place the kept candidates newest first; returns one ``Placed`` each, in seq order."""
    remaining = budget
    opened: dict[Category, bool] = {}
    placed: list[Placed] = []
    for item, verdict in sorted(candidates, key=lambda c: c[0].seq, reverse=True):
        heading = 0 if opened.get(item.category) else len(SECTION_HEADINGS[item.category])
        room = remaining - heading
        result = _place(item, verdict, per_item, room) if room > MIN_BODY else None
        if result is None:
            placed.append(Placed(item, verdict, None, reason="over_budget"))
            continue
        opened[item.category] = True
        remaining = room - len(result.text or "")
        placed.append(result)
    return sorted(placed, key=lambda p: p.item.seq)


def _place(item: ToolItem, verdict: Verdict, cap: int, room: int) -> Placed | None:
    parts = body_parts(item)
    body, omitted = cut_middle(parts, cap)
    text = format_item(item, verdict, body, omitted)
    if len(text) <= room:
        return Placed(item, verdict, text, omitted)
    # Cut further to what is left. The header grows by a few digits when the omitted
    # count does, so shrink until the whole item fits (two rounds suffice in practice).
    smaller = len(body) - (len(text) - room)
    while smaller >= MIN_BODY:
        body, omitted = cut_middle(parts, smaller)
        text = format_item(item, verdict, body, omitted)
        if len(text) <= room:
            return Placed(item, verdict, text, omitted)
        smaller -= len(text) - room
    return None


__all__ = ["MIN_BODY", "Placed", "cut_middle", "fit", "marker"]

"""Where a backend sees a session's history through a handoff: the point a switch or a
compaction left. The conversation keeps one and stores it (``toolwire.conversation``);
``compact.restore`` rebuilds the same handoff from it, byte for byte."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PointKind = Literal["switch", "compaction"]


@dataclass(frozen=True, slots=True)
class Point:
    """A handoff the backend sees the history through, after a switch or a compaction:
    ``block`` then ``history[tail_from:at]`` (for ``target``, with ``cuts``: message,
    part, cap) then everything after ``at``. Enough to rebuild the same bytes offline."""

    kind: PointKind
    at: int
    tail_from: int
    block: str
    target: str | None = None
    cuts: tuple[tuple[int, int, int], ...] = ()
    head: str | None = None
    """The proxy's: a key of the history the block stands for, since its client owns
    that history and may change it (a switch: the summarized head's cache key; a
    compaction: the first message's digest). None for the agent, which owns its own."""


__all__ = ["Point", "PointKind"]

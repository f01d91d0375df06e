"""Which tool items the new backend still needs: the dedup rules of docs/handoff.md.

Rules, by category (``extract.category_of``):

* ``read``: the latest item per (path, offset, limit) wins; earlier ones are superseded.
  A read followed by a successful ``Write`` of its file is dropped as stale (the write
  holds the whole new content); followed by an ``Edit`` (or a change that never
  returned), it is kept but marked stale: the rest of the file is still worth seeing.
* ``change``: the latest ``Write``/``Edit`` per path wins, and a failed one never hides
  the latest success before it (a failed edit changed nothing).
* ``command``: a read-only command's latest result per (cwd, normalized command) wins;
  a side-effecting command is kept every time it ran.
* ``other``: kept every time, unless the session knows the tool only reads (an MCP tool
  with ``readOnlyHint``): then its latest result per (tool, arguments) wins.

Everywhere, an error (or an interrupted call) is kept only if it is the latest item for
its key: a failure that was retried says nothing the retry does not. Decisions depend
only on item order and keys, so they are the same on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from toolwire.handoff.extract import ToolItem
from toolwire.updates.titles import canonical_tool

DropReason: TypeAlias = Literal["superseded", "stale", "over_budget"]
Policy: TypeAlias = Literal["latest", "latest_success", "every"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What dedup decided for one item: keep it (maybe marked stale) or drop it, and why."""

    keep: bool
    reason: DropReason | None = None
    stale_by: str | None = None
    """The tool whose later change made this read stale (it is kept, marked)."""

    @property
    def stale(self) -> bool:
        return self.stale_by is not None or self.reason == "stale"


KEEP = Verdict(keep=True)
SUPERSEDED = Verdict(keep=False, reason="superseded")


def policy_of(item: ToolItem) -> Policy:
    """How items sharing this item's key replace one another."""
    if item.category == "read":
        return "latest"
    if item.category == "change":
        return "latest_success"
    if item.category == "command" and item.command is not None and item.command.read_only:
        return "latest"
    if item.read_only:
        return "latest"
    return "every"


@dataclass(slots=True)
class _Index:
    """What a forward pass learns: the last item per key, per path changed, per path written."""

    latest: dict[tuple[str, ...], int]
    latest_success: dict[tuple[str, ...], int]
    changed: dict[str, tuple[int, str]]
    written: dict[str, int]


def _index(items: Sequence[ToolItem]) -> _Index:
    index = _Index({}, {}, {}, {})
    for item in items:
        index.latest[item.key] = item.seq
        if not item.failed:
            index.latest_success[item.key] = item.seq
        if item.category != "change" or item.path is None or item.is_error:
            continue
        # A change that never returned may have happened: reads before it are suspect.
        index.changed[item.path] = (item.seq, item.tool)
        if not item.interrupted and canonical_tool(item.tool) == "Write":
            index.written[item.path] = item.seq
    return index


def dedupe(items: Sequence[ToolItem]) -> list[Verdict]:
    """One verdict per item, in the same order. ``items`` must be in ``seq`` order."""
    index = _index(items)
    return [_verdict(item, index) for item in items]


def _verdict(item: ToolItem, index: _Index) -> Verdict:
    is_latest = index.latest[item.key] == item.seq
    if item.failed and not is_latest:
        return SUPERSEDED
    policy = policy_of(item)
    if policy == "latest" and not is_latest:
        return SUPERSEDED
    if (
        policy == "latest_success"
        and not is_latest
        and index.latest_success.get(item.key) != item.seq
    ):
        return SUPERSEDED
    if item.category != "read" or item.path is None:
        return KEEP
    if index.written.get(item.path, -1) > item.seq:
        return Verdict(keep=False, reason="stale")
    change = index.changed.get(item.path)
    if change is not None and change[0] > item.seq:
        return Verdict(keep=True, stale_by=change[1])
    return KEEP


__all__ = ["KEEP", "SUPERSEDED", "DropReason", "Policy", "Verdict", "dedupe", "policy_of"]

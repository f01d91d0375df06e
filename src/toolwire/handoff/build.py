"""Building a handoff: a pure function of (history, switch point, limits, summary).

``history[:switch_at]`` is what happened before the switch. Its last ``keep_last`` turns
(the tail) go on verbatim; everything before them (the head) is carried as one text
block: the summary plus the tool context, deduplicated (``dedupe``) and fitted to the
budget (``budget``). Tool items of the tail take part in dedup, because a later read or
write in the tail supersedes or stales an earlier one, but are not repeated in the
block: the tail already holds them. The block goes at the start of the first user
message the new backend sees: the tail's first, or the next prompt when there is no
tail. ``plan_handoff`` does all of it but the summary, in one pass over the history;
``HandoffPlan.finish`` adds the summary.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from toolwire.config.choices import (
    DEFAULT_KEEP_LAST,
    DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    DEFAULT_MAX_TOOL_RESULT_CHARS,
)
from toolwire.errors import UsageError
from toolwire.handoff.budget import Placed, fit
from toolwire.handoff.dedupe import DropReason, Verdict, dedupe
from toolwire.handoff.extract import ToolItem, extract_items
from toolwire.handoff.render import PREAMBLE, render_block, render_tool_context
from toolwire.handoff.summarize import Summary
from toolwire.handoff.tail import sanitize_tail, tail_start
from toolwire.history import Message, TextPart
from toolwire.history.images import without_images

ItemStatus: TypeAlias = Literal["kept", "truncated", "dropped", "tail"]


@dataclass(frozen=True, slots=True)
class ItemReport:
    """What became of one tool item: in the block (whole or cut), dropped (why), or in the
    verbatim tail."""

    item: ToolItem
    status: ItemStatus
    reason: DropReason | None = None
    stale: bool = False
    omitted_chars: int = 0
    chars: int = 0
    """Characters the item takes in the block (0 when it is not there)."""


@dataclass(frozen=True, slots=True)
class HandoffPlan:
    """Everything but the summary; ``finish`` turns it into a ``Handoff``."""

    head: Sequence[Message]
    tail: tuple[Message, ...]
    switch_at: int
    tail_start: int
    tool_context: str
    reports: tuple[ItemReport, ...]

    @property
    def head_items(self) -> list[ToolItem]:
        return [r.item for r in self.reports if r.status != "tail"]

    def finish(self, summary: Summary | None, preamble: str = PREAMBLE) -> Handoff:
        """The handoff with ``summary`` (None leaves the Summary section out)."""
        text = None if summary is None else summary.text
        block = render_block(text, self.tool_context, preamble)
        return Handoff(block, self.tail, self.switch_at, self.tail_start, summary, self.reports)


@dataclass(frozen=True, slots=True)
class HandoffStats:
    """Counts for the user's notice of a switch."""

    files_read: int
    files_changed: int
    commands: int
    other_tools: int
    dropped: int
    truncated: int
    block_chars: int

    def describe(self) -> str:
        """``3 files read, 1 file changed, 4 commands, 0 other tools (12345 chars)``."""
        counts = [
            _plural(self.files_read, "file read", "files read"),
            _plural(self.files_changed, "file changed", "files changed"),
            _plural(self.commands, "command", "commands"),
            _plural(self.other_tools, "other tool", "other tools"),
        ]
        return f"{', '.join(counts)} ({self.block_chars} chars)"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True, slots=True)
class Handoff:
    """What the new backend receives: ``block`` + the verbatim ``tail``.

    Keep this object for as long as the session stays on the new backend and build every
    request with ``apply``: the block is then the same bytes on every request.
    """

    block: str
    tail: tuple[Message, ...]
    switch_at: int
    tail_start: int
    summary: Summary | None
    items: tuple[ItemReport, ...]

    def context(self, later: Sequence[Message] = ()) -> list[Message]:
        """The messages for the new backend: the tail then ``later``, the block at the start
        of the first user message (in a user message of its own if none comes first).
        The tail's images go as their notes: the handoff carries text, never image bytes."""
        messages = [*without_images(self.tail, ""), *later]
        if not self.block:
            return messages
        if messages and messages[0].role == "user":
            first = messages[0]
            messages[0] = Message("user", (TextPart(self.block), *first.parts), first.backend)
        else:
            messages.insert(0, Message("user", (TextPart(self.block),)))
        return messages

    def apply(self, history: Sequence[Message]) -> list[Message]:
        """``context`` for a history that continues the one this handoff was built from."""
        if len(history) < self.switch_at:
            raise UsageError("the history is shorter than the handoff's switch point")
        return self.context(history[self.switch_at :])

    @property
    def stats(self) -> HandoffStats:
        shown = [r for r in self.items if r.status in ("kept", "truncated")]
        count = {c: sum(1 for r in shown if r.item.category == c) for c in ("read", "change")}
        return HandoffStats(
            files_read=count["read"],
            files_changed=count["change"],
            commands=sum(1 for r in shown if r.item.category == "command"),
            other_tools=sum(1 for r in shown if r.item.category == "other"),
            dropped=sum(1 for r in self.items if r.status == "dropped"),
            truncated=sum(1 for r in self.items if r.status == "truncated"),
            block_chars=len(self.block),
        )


def plan_handoff(
    history: Sequence[Message],
    switch_at: int | None = None,
    *,
    cwd: str | None = None,
    target: str | None = None,
    max_tool_context_chars: int = DEFAULT_MAX_TOOL_CONTEXT_CHARS,
    max_tool_result_chars: int = DEFAULT_MAX_TOOL_RESULT_CHARS,
    keep_last: int = DEFAULT_KEEP_LAST,
    tail_from: int | None = None,
    read_only_tools: Collection[str] = (),
) -> HandoffPlan:
    """Split, extract, dedupe, fit and render the tool context of ``history[:switch_at]``.

    ``cwd`` is the session's working directory (relative paths are resolved against it);
    ``target`` names the backend that will receive the handoff (its own call signatures
    in the tail are kept). ``tail_from`` sets where the verbatim tail starts instead of
    ``keep_last`` (a compaction cuts between steps of one turn); it must not be a tool
    message, which belongs with the call before it. ``read_only_tools`` names the
    session's tools that only read (they dedupe like reads). No model is called.
    """
    if min(max_tool_context_chars, max_tool_result_chars, keep_last) < 0:
        raise UsageError("handoff limits must not be negative")
    end, start = _bounds(history, switch_at, keep_last, tail_from)
    items = extract_items(history, end, cwd=cwd, read_only=read_only_tools)
    verdicts = dedupe(items)
    in_head = [(i, v) for i, v in zip(items, verdicts, strict=True) if i.message_index < start]
    placed = fit(
        [(i, v) for i, v in in_head if v.keep],
        budget=max_tool_context_chars,
        per_item=max_tool_result_chars,
    )
    context = render_tool_context([(p.item, p.text) for p in placed if p.text is not None])
    by_seq = {p.item.seq: p for p in placed}
    reports = tuple(
        _report(i, v, by_seq.get(i.seq), start) for i, v in zip(items, verdicts, strict=True)
    )
    tail = tuple(sanitize_tail(history[start:end], target))
    return HandoffPlan(history[:start], tail, end, start, context, reports)


def _bounds(
    history: Sequence[Message], switch_at: int | None, keep_last: int, tail_from: int | None
) -> tuple[int, int]:
    """Where the handoff's history ends and its verbatim tail starts (``UsageError``
    when either is not a place in ``history`` it can be)."""
    end = len(history) if switch_at is None else switch_at
    if not 0 <= end <= len(history):
        raise UsageError(f"switch_at {end} is outside the history (0..{len(history)})")
    start = tail_start(history, end, keep_last) if tail_from is None else tail_from
    if not 0 <= start <= end or (start < end and history[start].role == "tool"):
        raise UsageError(f"tail_from {start} does not start a step of history[:{end}]")
    return end, start


def _report(item: ToolItem, verdict: Verdict, placed: Placed | None, start: int) -> ItemReport:
    if item.message_index >= start:
        return ItemReport(item, "tail", stale=verdict.stale)
    if placed is None:
        return ItemReport(item, "dropped", verdict.reason, stale=verdict.stale)
    if placed.text is None:
        return ItemReport(item, "dropped", placed.reason, stale=verdict.stale)
    status: ItemStatus = "truncated" if placed.omitted else "kept"
    return ItemReport(item, status, None, verdict.stale, placed.omitted, len(placed.text))


__all__ = [
    "DEFAULT_KEEP_LAST",
    "DEFAULT_MAX_TOOL_CONTEXT_CHARS",
    "DEFAULT_MAX_TOOL_RESULT_CHARS",
    "Handoff",
    "HandoffPlan",
    "HandoffStats",
    "ItemReport",
    "ItemStatus",
    "plan_handoff",
]

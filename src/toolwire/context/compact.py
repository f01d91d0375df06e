"""Compaction: the handoff a session makes to itself when its context fills up.

A compaction is ``toolwire.handoff`` aimed at the same backend, with budgets in tokens
sized from the backend's window instead of the ``[handoff]`` character limits:

* the verbatim tail is the latest *steps* (an assistant message with its results, or a
  user message) that fit ``TAIL_SHARE`` of the room, at least the last one: a long tool
  loop is one user turn, so cutting at user turns (as a switch does) would keep it all;
* the tool context of everything before it, deduplicated, newest first, fits
  ``TOOLS_SHARE``; each item may take the whole share, so the file read last survives
  whole when it fits at all;
* the summary always holds the user's first and latest requests verbatim, and the focus
  the user asked for (``/compact FOCUS``).

What is left of the room is where the session grows until the next compaction. When
even this does not fit (one tool result bigger than the window), the largest parts of
the tail are cut in the middle with a visible marker and ``oversized`` names them, so
the user can be told. Everything here is a pure function of its inputs: the same history
gives the same bytes, so the provider's prompt cache holds across a compaction and a
stored compaction (``Compaction.point``, ``restore``) rebuilds exactly in another process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from toolwire.backends import Backend
from toolwire.context.point import Point
from toolwire.context.tokens import (
    BYTES_PER_TOKEN,
    estimate_message,
    estimate_messages,
    message_bytes,
)
from toolwire.context.windows import Window
from toolwire.errors import UsageError
from toolwire.handoff import Handoff, HandoffPlan, Summary, SummaryCache, plan_handoff, summarize
from toolwire.handoff.budget import cut_middle
from toolwire.handoff.extractive import extractive_summary, user_requests
from toolwire.handoff.tail import sanitize_tail
from toolwire.history import Message, Part, TextPart, ToolCallPart, ToolResultPart
from toolwire.updates.titles import shorten

PREAMBLE = (
    "Earlier turns of this session were compacted to fit the model's context window and are\n"
    "not repeated here. The summary retells them; the tool sections are verbatim copies of\n"
    "what the tools returned (only the latest result per file and per read-only command, cut\n"
    "in the middle where marked). Read a file again before quoting or editing anything\n"
    "marked stale or cut."
)
TAIL_SHARE = 0.30
TOOLS_SHARE = 0.20
MIN_AVAILABLE = 1024
"""Tokens a compaction plans with even when the system prompt and tools fill the window."""
MIN_PART_BYTES = 400
_SUBJECTS = ("file_path", "path", "command", "pattern", "url", "query")
FIT_SHARE = 0.70
"""What a compacted request may fill at most, tail cut to fit included."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Where a compaction must land, in tokens, and how tokens map to characters."""

    window: Window
    fixed_tokens: int
    """System prompt and tools: sent with every request, never compacted."""
    ratio: float = 1.0
    """The provider's count over the raw estimate (``meter.ContextMeter.ratio``)."""
    squeeze: float = 1.0
    """Below 1 after the provider refused a request the estimate said would fit."""

    @property
    def available(self) -> int:
        return max(MIN_AVAILABLE, self.window.room - self.fixed_tokens)

    def tokens(self, messages: Sequence[Message]) -> int:
        return int(estimate_messages(messages) * self.ratio + 0.5)

    def chars(self, tokens: int) -> int:
        return int(tokens * BYTES_PER_TOKEN / self.ratio)

    def share(self, fraction: float) -> int:
        return int(self.available * fraction * self.squeeze)


@dataclass(frozen=True, slots=True)
class Cut:
    """A part of the tail cut to fit: which message, which part, to how many characters."""

    message: int
    part: int
    cap: int
    label: str


@dataclass(frozen=True, slots=True)
class Compaction:
    """A finished compaction: the handoff to send from now on, and what it did."""

    handoff: Handoff
    before_tokens: int
    after_tokens: int
    cuts: tuple[Cut, ...] = ()
    focus: str | None = None
    ratio: float = 1.0
    """The estimate's correction it was planned with (kept, so a reopened session
    estimates the compacted request as this one did)."""

    @property
    def oversized(self) -> tuple[str, ...]:
        """What had to be cut to fit, for the user ("Read result of 2400000 chars")."""
        return tuple(c.label for c in self.cuts)

    @property
    def summary_text(self) -> str:
        return self.handoff.summary.text if self.handoff.summary is not None else ""

    def describe(self) -> str:
        """``Compacted 184k tokens to 21k: kept 12 files and 5 commands verbatim``."""
        files = {
            r.item.path or r.item.label
            for r in self.handoff.items
            if r.status != "dropped" and r.item.category in ("read", "change")
        }
        commands = sum(
            1 for r in self.handoff.items if r.status != "dropped" and r.item.category == "command"
        )
        text = (
            f"Compacted {_k(self.before_tokens)} tokens to {_k(self.after_tokens)}: kept "
            f"{_plural(len(files), 'file')} and {_plural(commands, 'command')} verbatim"
        )
        if self.cuts:
            text += f"; cut {', '.join(self.oversized)} in the middle to fit the window"
        return text + "."

    def point(self, target: str | None) -> Point:
        """What the conversation keeps to ``restore`` this compaction byte for byte."""
        handoff = self.handoff
        cuts = tuple((c.message, c.part, c.cap) for c in self.cuts)
        return Point(
            "compaction", handoff.switch_at, handoff.tail_start, handoff.block, target, cuts
        )


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Everything but the summary; ``finish`` adds it (the agent asks a model between)."""

    plan: HandoffPlan
    budget: Budget
    before_tokens: int
    focus: str | None
    cwd: str | None = None

    @property
    def head(self) -> Sequence[Message]:
        return self.plan.head

    @property
    def empty(self) -> bool:
        """Nothing before the tail: compacting would change nothing."""
        return not self.plan.head

    def finish(self, summary: Summary | None) -> Compaction:
        """The compaction with ``summary`` (the model's or the extractive one)."""
        if summary is not None:
            summary = dataclasses.replace(summary, text=self._summary_text(summary))
        handoff = self.plan.finish(summary, PREAMBLE)
        handoff, cuts = _fit_tail(handoff, self.budget)
        after = self.budget.fixed_tokens + self.budget.tokens(handoff.context())
        return Compaction(handoff, self.before_tokens, after, cuts, self.focus, self.budget.ratio)

    async def complete(
        self, summarizer: Backend | None, *, cache: SummaryCache | None = None, timeout: float
    ) -> Compaction:
        """The compaction with its summary: ``summarizer``'s (a model asked for notes
        that keep ``focus`` in view), or the extractive one without it or when it fails."""
        summary = None
        if not self.empty:
            summary = await summarize(
                self.plan.head,
                summarizer,
                items=self.plan.head_items,
                cwd=self.cwd,
                cache=cache,
                timeout=timeout,
                focus=self.focus,
            )
        return self.finish(summary)

    def extractive_summary(self) -> Summary:
        """The offline summary of the head: no model call, deterministic."""
        text = extractive_summary(self.plan.head, self.plan.head_items, cwd=self.cwd)
        return Summary(text, "extractive")

    def extractive(self) -> Compaction:
        """``finish`` with the offline summary."""
        return self.finish(self.extractive_summary())

    def _summary_text(self, summary: Summary) -> str:
        # The model's notes retell the task in its words; the user's own stay verbatim
        # (the extractive summary has them already).
        parts = [] if summary.source == "extractive" else user_requests(self.plan.head)
        if self.focus:
            parts.insert(0, f"Focus the user asked for: {self.focus}")
        return "\n\n".join([*parts, summary.text])


def plan_compaction(
    history: Sequence[Message],
    budget: Budget,
    *,
    cwd: str | None = None,
    target: str | None = None,
    focus: str | None = None,
    read_only_tools: Collection[str] = (),
    tail_share: float = TAIL_SHARE,
) -> CompactionPlan:
    """Everything of the compaction of ``history`` but its summary (``finish`` adds it),
    within ``budget``, as ``handoff.plan_handoff`` is for a handoff; ``tail_share`` of
    the room goes to the verbatim tail (0: only the last step); ``read_only_tools`` are
    the session's tools that only read, deduplicated like reads."""
    end = len(history)
    start = recent_start(history, end, budget.share(tail_share), budget.ratio)
    tool_chars = budget.chars(budget.share(TOOLS_SHARE))
    plan = plan_handoff(
        history,
        end,
        cwd=cwd,
        target=target,
        max_tool_context_chars=tool_chars,
        max_tool_result_chars=tool_chars,
        tail_from=start,
        read_only_tools=read_only_tools,
    )
    before = budget.fixed_tokens + budget.tokens(history)
    steer = (focus.strip() or None) if focus else None
    return CompactionPlan(plan, budget, before, steer, cwd)


def build_compaction(
    history: Sequence[Message],
    budget: Budget,
    *,
    cwd: str | None = None,
    target: str | None = None,
    focus: str | None = None,
    summary: Summary | None = None,
) -> Compaction:
    """The compaction without a model call (``summary`` given, else the extractive one),
    as ``handoff.build_handoff`` is for a handoff."""
    planned = plan_compaction(history, budget, cwd=cwd, target=target, focus=focus)
    return planned.extractive() if summary is None else planned.finish(summary)


def recent_start(history: Sequence[Message], end: int, tokens: int, ratio: float = 1.0) -> int:
    """Where the latest steps of ``history[:end]`` that fit ``tokens`` begin (at least one).

    A step is a user message, or an assistant message with the tool results after it;
    the start is never a tool message, so a call keeps its result.
    """
    start, used = end, 0
    while start > 0:
        begin = start - 1
        while begin > 0 and history[begin].role == "tool":
            begin -= 1
        cost = sum(estimate_message(m) for m in history[begin:start]) * ratio
        if start < end and used + cost > tokens:
            break
        used += int(cost)
        start = begin
    return start


def restore(history: Sequence[Message], point: Point, target: str | None = None) -> Handoff:
    """The handoff of ``point`` (a switch's or a compaction's) rebuilt against the
    session's history; ``target``: the backend of a point stored without one. A point
    outside the history (a history changed under it) raises ``UsageError``."""
    at, start = point.at, point.tail_from
    if not 0 <= start <= at <= len(history):
        raise UsageError("the stored point is outside the session's history")
    cuts = [Cut(m, p, c, "") for m, p, c in point.cuts]
    tail = _apply_cuts(sanitize_tail(history[start:at], point.target or target), cuts)
    return Handoff(point.block, tuple(tail), at, start, None, ())


def _fit_tail(handoff: Handoff, budget: Budget) -> tuple[Handoff, tuple[Cut, ...]]:
    """Cut the tail's largest parts in the middle until the compacted request fits.

    The tail may take what the block leaves of ``FIT_SHARE`` of the room; the rest is
    where the session grows before the next compaction.
    """
    block = budget.tokens([Message("user", (TextPart(handoff.block),))])
    room = budget.share(FIT_SHARE) - block
    tail = list(handoff.tail)
    if budget.tokens(tail) <= room:
        return handoff, ()
    sizes = [
        (len(_text(part)), m, p)
        for m, message in enumerate(tail)
        for p, part in enumerate(message.parts)
        if isinstance(part, ToolResultPart | TextPart)
    ]
    fixed = sum(message_bytes(m) for m in tail) - sum(size for size, _, _ in sizes)
    cap = _cap([size for size, _, _ in sizes], budget.chars(max(0, room)) - fixed)
    calls = {c.id: c for m in tail for c in m.tool_calls()}
    cuts = tuple(
        Cut(m, p, cap, _label(tail[m].parts[p], size, calls)) for size, m, p in sizes if size > cap
    )
    return dataclasses.replace(handoff, tail=tuple(_apply_cuts(tail, cuts))), cuts


def _cap(sizes: list[int], room_chars: int) -> int:
    """The largest per-part cap (at least ``MIN_PART_BYTES``) under which the parts total
    at most ``room_chars``."""
    low, high = MIN_PART_BYTES, max(sizes, default=MIN_PART_BYTES)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(min(size, mid) for size in sizes) <= room_chars:
            low = mid
        else:
            high = mid - 1
    return low


def _apply_cuts(tail: Sequence[Message], cuts: Sequence[Cut]) -> list[Message]:
    out = list(tail)
    for cut in cuts:
        if cut.message >= len(out) or cut.part >= len(out[cut.message].parts):
            continue
        message = out[cut.message]
        parts = list(message.parts)
        parts[cut.part] = _cut_part(parts[cut.part], cut.cap)
        out[cut.message] = dataclasses.replace(message, parts=tuple(parts))
    return out


def _cut_part(part: Part, cap: int) -> Part:
    if isinstance(part, ToolResultPart):
        text, _ = cut_middle([part.content], cap)
        return dataclasses.replace(part, content=text)
    if isinstance(part, TextPart):
        text, _ = cut_middle([part.text], cap)
        return TextPart(text)
    return part


def _text(part: Part) -> str:
    if isinstance(part, ToolResultPart):
        return part.content
    return part.text if isinstance(part, TextPart) else ""


def _label(part: Part, size: int, calls: Mapping[str, ToolCallPart]) -> str:
    """What was cut, for people: ``the Read result of src/big.log (90011 chars)``."""
    if not isinstance(part, ToolResultPart):
        return f"a message of {size} chars"
    call = calls.get(part.call_id)
    args = call.arguments if call is not None and isinstance(call.arguments, Mapping) else {}
    subject = next((args[k] for k in _SUBJECTS if isinstance(args.get(k), str)), None)
    what = (
        f"the {part.name} result of {shorten(subject, 60)}" if subject else f"a {part.name} result"
    )
    return f"{what} ({size} chars)"


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens / 1000:.1f}k"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


__all__ = [
    "FIT_SHARE",
    "MIN_AVAILABLE",
    "PREAMBLE",
    "TAIL_SHARE",
    "TOOLS_SHARE",
    "Budget",
    "Compaction",
    "CompactionPlan",
    "Cut",
    "build_compaction",
    "plan_compaction",
    "recent_start",
    "restore",
]

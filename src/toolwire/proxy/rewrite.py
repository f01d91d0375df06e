"""The switch-aware history rewrite (docs/proxy.md, "The rewrite after a switch").

Claude Code owns the history and resends all of it on every request, so a summary
injected once would vanish on the next turn. After a switch, every request of the
session to the new backend is rewritten the same way: the messages before the switch
point become the handoff block (``toolwire.handoff``: summary plus the deduplicated,
verbatim tool context), the turns after it pass as they are. The summary is computed
once per summarized head (``handoff.summarize.cache_key``) and kept in the session
state, and the block is a pure function of the (normalized) head, so the rewritten
prefix is the same bytes on every later request.

Thinking: an assistant turn belongs to the backend recorded as its producer
(``provenance.py``), and only that backend gets its thinking back. Turns before the
switch point lose their thinking in any case: the rewrite changed what came before
them, and a thinking block is bound to the exact prefix it was produced after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from toolwire.config.schema import HandoffConfig
from toolwire.conversation import Conversation
from toolwire.handoff import build_handoff
from toolwire.handoff.summarize import cache_key
from toolwire.handoff.tail import tail_start
from toolwire.history import Message
from toolwire.proxy.provenance import owner, part_keys
from toolwire.proxy.state import SessionState


@dataclass(frozen=True, slots=True)
class View:
    """What ``target`` is sent: ``prefix`` (the handoff: block and the last turns before
    the switch, empty without one), then the history from ``start`` attributed."""

    prefix: list[Message]
    start: int
    later: list[Message]

    @property
    def messages(self) -> list[Message]:
        """The whole neutral history to send (the block joins the first user message)."""
        if not self.prefix:
            return self.later
        head = self.prefix
        if head[-1].role == "user" and self.later and self.later[0].role == "user":
            merged = Message("user", (*head[-1].parts, *self.later[0].parts))
            return [*head[:-1], merged, *self.later[1:]]
        return [*head, *self.later]


def rewrite(
    history: Sequence[Message], state: SessionState, target: str, limits: HandoffConfig
) -> tuple[View, bool]:
    """The view to send ``target``, and whether ``state`` changed (a new handoff)."""
    point = state.conversation.point
    if point is None:
        return View([], 0, attributed(history, state.produced)), False
    switch_at = point.at
    if point.target != target or switch_at > len(history):
        # A one-off request elsewhere (an explicit model), or a history that no longer
        # continues the one seen at the switch (the client compacted it): no handoff, and
        # no thinking for anyone, since what each turn was produced after is unknown.
        return View([], 0, list(history)), False
    # Keyed by what is summarized, as the agent keys its summaries: a history the client
    # changed before the switch point (an edited or rewound turn) gets its own.
    key = cache_key(history[: tail_start(history, switch_at, limits.keep_last)], None)
    changed = point.head != key
    if changed:  # built once per head: later requests restore the same bytes
        conversation = Conversation(history)
        built = build_handoff(history, switch_at, target=target, **limits.model_dump())
        conversation.switched(built, target)
        record = conversation.record()
        assert record.point is not None  # switched() just set it
        state.conversation = replace(record, point=replace(record.point, head=key))
    handoff = Conversation.restore(state.conversation, history, target).handoff
    if handoff is None:  # the stored point does not fit this history (logged): send it raw
        return View([], 0, list(history)), changed
    later = attributed(history[switch_at:], state.produced)
    return View(handoff.context(), switch_at, later), changed


def attributed(history: Sequence[Message], produced: Mapping[str, str]) -> list[Message]:
    """Each assistant turn attributed to its recorded producer (None when unknown)."""
    return [
        replace(m, backend=owner(part_keys(m), produced)) if m.role == "assistant" else m
        for m in history
    ]


__all__ = ["View", "attributed", "rewrite"]

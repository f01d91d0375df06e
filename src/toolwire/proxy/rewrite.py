"""The switch-aware history rewrite (issue 6 section 4, research/switching.md 0 and 6).

Claude Code owns the history and resends all of it on every request, so a summary
injected once would vanish on the next turn. After a switch, every request of the
session to the new backend is rewritten the same way: the messages before the switch
point become the handoff block (``toolwire.handoff``: summary plus the deduplicated,
verbatim tool context), the turns after it pass as they are. The summary is computed
once per switch and kept in the session state, and the block is a pure function of the
(normalized) head, so the rewritten prefix is the same bytes on every later request.

Thinking: turns after the switch are attributed to the new backend (its own thinking
goes back to it); every earlier turn is attributed to nobody, so its thinking is never
sent to a backend that did not produce it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from toolwire.config_schema import HandoffConfig
from toolwire.handoff import Summary, build_handoff
from toolwire.history import Message
from toolwire.proxy.sessions import SessionState


def rewrite(
    history: Sequence[Message], state: SessionState, target: str, limits: HandoffConfig
) -> tuple[list[Message], bool]:
    """The messages to send ``target``, and whether ``state`` changed (a new summary)."""
    if not state.switches:
        return [_owned(m, target) for m in history], False
    switch_at, switched_to = state.switches[-1]
    if switched_to != target or switch_at > len(history):
        # A one-off request elsewhere (an explicit model), or a history that no longer
        # continues the one seen at the switch (the client compacted it): no handoff, and
        # no thinking for anyone, since the turns' producers are unknown.
        return list(history), False
    key = str(switch_at)
    cached = state.summaries.get(key)
    handoff = build_handoff(
        history,
        switch_at,
        target=target,
        max_tool_context_chars=limits.max_tool_context_chars,
        max_tool_result_chars=limits.max_tool_result_chars,
        keep_last=limits.keep_last,
        summary=Summary(cached, "extractive") if cached is not None else True,
    )
    changed = cached is None
    if changed:
        state.summaries[key] = handoff.summary.text if handoff.summary else ""
    later = [_owned(m, target) for m in history[switch_at:]]
    return handoff.context(later), changed


def _owned(message: Message, backend: str) -> Message:
    return replace(message, backend=backend) if message.role == "assistant" else message


__all__ = ["rewrite"]

"""A model switch inside a session: the handoff the new backend gets.

Choosing another ``model`` config option applies at the next prompt. The new backend
then does not get the raw history (its files read and commands run would turn into
half-remembered prose) but ``toolwire.handoff``: a summary of what came before plus the
tool context verbatim and deduplicated, under ``[handoff]`` budgets, and the last turns
as they were (docs/agent.md "Model switch"). The summary is written by the new model; for
a replay backend (which would serve a recorded answer instead) it is the offline
extractive one. The raw history is kept: a later switch is computed from it.

When the handoff would not fit the new backend's window (a switch to a smaller model),
the switch is a compaction aimed at the new backend instead (``toolwire.context``):
its budgets come from that window, so the first request after the switch fits.

The switch point is stored with the session (the conversation's record, with its block),
so a session loaded after a restart sends the same handoff instead of the whole raw
history, whichever model wrote the summary. So is the
backend that answers (``ACTIVE_KEY``) next to the one chosen (the ``backend`` column,
written by ``set_config_option``): a switch chosen in one process and not yet made is
still pending in the next, and the prompt that makes it records it in the same write.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from toolwire.agent.session import mcp_calls
from toolwire.agent.session.request_shape import request_shape
from toolwire.agent.session.state import Runtime, Session
from toolwire.backends import Backend, create_backend
from toolwire.config import ConfigError
from toolwire.context import (
    Budget,
    Compaction,
    Window,
    backend_window,
    estimate_messages,
    plan_compaction,
)
from toolwire.conversation import RECORD_KEY
from toolwire.handoff import (
    Handoff,
    Summary,
    ToolItem,
    build_handoff,
    describe_carried,
    plan_handoff,
    summarize,
)
from toolwire.history import Message

log = logging.getLogger("toolwire.agent")
#: The backend that answers the session (its ``backend`` column is the one chosen).
ACTIVE_KEY = "active_backend"
SUMMARY_TIMEOUT_S = 60.0
SUMMARY_ALLOWANCE = 2048
"""Tokens kept free for the summary when checking that a handoff fits the new window."""


class Switcher:
    """Moving one session to another backend (module doc)."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    async def switch(self, switch_at: int) -> str:
        """Move the session to ``session.model.pending``; the notice to show the user."""
        session, runtime = self.session, self.runtime
        old, new = session.model.active, session.model.pending
        window = backend_window(runtime.config.backend(new), runtime.config.limits)
        handoff, stored = await self._handoff(switch_at, window)
        if stored:
            session.conversation.compacted(stored, new)
        else:
            session.conversation.switched(handoff, new)
        session.model.switched(new)
        sid = session.id
        # One write, so the switch is made once in any process. The chosen backend (the
        # ``backend`` column) is left alone: the user may have chosen again meanwhile. An
        # earlier compaction is superseded (or replaced by this one, sized to the new window).
        done = {RECORD_KEY: session.conversation.record().to_json(), ACTIVE_KEY: new}
        await runtime.store.call(lambda db: db.update(sid, config_values=done))
        notice = _notice(old, new, handoff)
        if stored is not None:
            notice += f" The conversation was compacted to fit {new}'s {window.size}-token window."
        return notice

    async def _handoff(self, switch_at: int, window: Window) -> tuple[Handoff, Compaction | None]:
        """What the new backend gets: the handoff, or a compaction into its window when the
        handoff would not fit (then returned as well, to be stored)."""
        session, runtime, summarizer = self.session, self.runtime, self._summarizer()
        config, new = runtime.config, session.model.pending
        read_only = mcp_calls.read_only_tools(session)
        plan = plan_handoff(
            session.history,
            switch_at,
            cwd=session.who.cwd,
            target=new,
            read_only_tools=read_only,
            **config.handoff.model_dump(),
        )
        fixed = request_shape(session, config, new).fixed_tokens()
        room = config.compaction.threshold * window.room - fixed - SUMMARY_ALLOWANCE

        async def summary_of(head: Sequence[Message], items: Sequence[ToolItem]) -> Summary:
            return await summarize(
                head,
                summarizer,
                items=items,
                cwd=session.who.cwd,
                cache=runtime.summaries,
                timeout=SUMMARY_TIMEOUT_S,
            )

        # One plan serves the fit check (its block without a summary) and the handoff.
        if estimate_messages(plan.finish(None).context()) <= room:
            return plan.finish(await summary_of(plan.head, plan.head_items)), None
        planned = plan_compaction(
            session.history[:switch_at],
            Budget(window, fixed),
            cwd=session.who.cwd,
            target=new,
            read_only_tools=read_only,
        )
        compaction = planned.finish(await summary_of(planned.head, planned.plan.head_items))
        return compaction.handoff, compaction

    def _summarizer(self) -> Backend | None:
        """The new backend, to write the summary; None for a replay backend (it would serve a
        recorded answer) or one that cannot be created (the extractive summary then)."""
        session, runtime = self.session, self.runtime
        chosen = runtime.config.backend(session.model.pending)
        if chosen.provider == "replay":
            return None
        try:
            return create_backend(chosen, runtime.config.limits, client=runtime.http)
        except ConfigError as exc:
            log.warning("session %s: no model summary for the handoff: %s", session.id, exc)
            return None

    def rebuild(self, switch_at: int) -> None:
        """The handoff of a session whose switch point was stored without its block (by an
        older version), rebuilt offline with the extractive summary."""
        session, runtime = self.session, self.runtime
        if not 0 <= switch_at <= len(session.history):
            return
        handoff = build_handoff(
            session.history,
            switch_at,
            cwd=session.who.cwd,
            target=session.model.active,
            **runtime.config.handoff.model_dump(),
        )
        session.conversation.switched(handoff, session.model.active)


def _notice(old: str, new: str, handoff: Handoff) -> str:
    """What the new backend gets, counted over the whole session (``handoff.carried``)."""
    summary = handoff.summary
    how = "no summary"
    if summary is not None:
        how = "a summary written by the new model" if summary.source == "llm" else "a summary"
    work = describe_carried(handoff.items, summarized=summary is not None)
    moved = f"Switched the model from {old} to {new}."
    if old == new:  # the same backend, pointed at another endpoint by the editor
        moved = f"{new} now answers from the endpoint the editor set."
    return (
        f"{moved} {new} gets {how} of the conversation and "
        f"the last {len(handoff.tail)} messages as they were. The session's tool work: "
        f"{work}. The previous model's reasoning is not carried over."
    )


__all__ = ["ACTIVE_KEY", "Switcher"]

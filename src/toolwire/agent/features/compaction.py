"""Compaction in the agent: when a session is compacted, and what the user sees of it.

A session is compacted (``toolwire.context.compact``) before a request whose estimate
passes ``[compaction] threshold`` of its backend's room, on ``/compact [focus]``, and
after a provider refused a request as too long (then the request is tried once more).
The raw history is never rewritten: the compaction becomes the conversation's point
(``Conversation.compacted``), through which every later request sees the history,
exactly like a model switch, and is stored with it (the block and the tail's bounds, in
the conversation's record) so a reopened session, in any process, sends the same bytes.

The user sees it in the form their client understands (ACP v1 schema 1.25): a
``compaction_update`` (``in_progress``, then ``completed`` with the summary, ``failed``
or ``cancelled``) when the client advertised ``session.compaction``; else a ``notice``
when it advertised ``session.notices``; else an agent message. The transcript keeps the
``compaction_update``; ``session/load`` replays it as a message to a client without the
capability.

A cancel during the summary's model call cancels the compaction: nothing of it is kept.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable

from toolwire.agent.session import mcp_calls
from toolwire.agent.session.hooks import SessionHooks
from toolwire.agent.session.request_shape import request_shape
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store.database import SessionDatabase
from toolwire.backends import Backend, create_backend
from toolwire.config import Config, ConfigError
from toolwire.context import Budget, Compaction, ContextMeter, backend_window, plan_compaction
from toolwire.context.compact import CompactionPlan
from toolwire.conversation import RECORD_KEY
from toolwire.updates.builders import CompactionUpdate, Severity, compaction_update, notice

log = logging.getLogger("toolwire.agent")
SUMMARY_TIMEOUT_S = 60.0


def meter(session: Session, config: Config) -> ContextMeter:
    """The session's meter, for the backend that answers it now (a switch makes a new
    one; the cost so far carries over); its window from ``config``."""
    active = session.model.active
    window = backend_window(config.backend(active), config.limits)
    return session.conversation.meter_for(active, window)


_UNCHANGED = (
    "The model now sees a summary and the tool context verbatim in place of the earlier "
    "turns; your transcript is unchanged."
)


class Compactor:
    """Runs one compaction of a session and shows it; ``say`` writes an agent message."""

    def __init__(self, session: Session, runtime: Runtime, say: Callable[[str], Awaitable[None]]):
        self.session = session
        self.runtime = runtime
        self._say = say

    async def run(
        self, *, focus: str | None = None, squeeze: float = 1.0, forced: bool = False
    ) -> Compaction | None:
        """Compact now; the compaction, or None when there was nothing to do or it failed.

        ``forced``: the user asked (``/compact``), so "nothing to compact" is said too.
        """
        session = self.session
        trigger = "manual" if forced else "auto"  # PreCompact hooks cannot stop it
        hooks = SessionHooks(session, self.runtime)
        await hooks.run("PreCompact", trigger=trigger, custom_instructions=focus or "")
        gauge = meter(session, self.runtime.config)
        planned = self._plan(gauge, focus, squeeze, forced=forced)
        if planned.empty and not planned.extractive().cuts:
            if forced:
                await self._say(
                    f"Nothing to compact yet: the conversation takes about "
                    f"{planned.before_tokens} tokens of {gauge.window.size}."
                )
            return None
        cid = f"compaction-{uuid.uuid4().hex[:12]}"
        began = time.perf_counter()
        compaction = await self._finish(cid, planned)
        if compaction is None:
            return None
        await self._apply(cid, compaction, gauge)
        took = (time.perf_counter() - began) * 1000
        log.info(
            "session %s: %s (%.0f ms)",
            session.id,
            compaction.describe(),
            took,
            extra={"compaction_ms": took},
        )
        return compaction

    async def _finish(self, cid: str, planned: CompactionPlan) -> Compaction | None:
        """``planned`` with its summary, shown in progress; None when the summary failed.
        Failed and cancelled are shown; a cancel is raised again (nothing is kept)."""
        self._show(cid, "in_progress")
        try:
            cache = self.runtime.summaries
            return await planned.complete(
                self._summarizer(), cache=cache, timeout=SUMMARY_TIMEOUT_S
            )
        except BaseException as exc:
            cancelled = not isinstance(exc, Exception)
            self._show(cid, "cancelled" if cancelled else "failed", error=str(exc) or None)
            if cancelled:
                raise
            log.exception("session %s: compaction failed", self.session.id)
            return None

    async def _apply(self, cid: str, compaction: Compaction, gauge: ContextMeter) -> None:
        """The conversation goes on from ``compaction`` (stored, shown, the meter told)."""
        self.session.conversation.compacted(compaction, self.session.model.active)
        gauge.used = compaction.after_tokens
        await self._keep(cid, compaction)
        self.session.services.outbox.update(gauge.update())

    def _fixed(self) -> int:
        """What the next request carries besides the messages, as the request counts it."""
        return request_shape(self.session, self.runtime.config).fixed_tokens()

    def _plan(
        self, gauge: ContextMeter, focus: str | None, squeeze: float, *, forced: bool
    ) -> CompactionPlan:
        """The compaction's plan under the session's budget; when the user asked and there
        is nothing to cut, one that keeps only the last step verbatim."""
        session = self.session
        budget = Budget(gauge.window, int(self._fixed() * gauge.ratio), gauge.ratio, squeeze)
        plan = functools.partial(
            plan_compaction,
            session.history,
            budget,
            cwd=session.who.cwd,
            target=session.model.active,
            focus=focus,
            read_only_tools=mcp_calls.read_only_tools(session),
        )
        planned = plan()
        if planned.empty and forced:
            planned = plan(tail_share=0.0)
        return planned

    def _summarizer(self) -> Backend | None:
        """The model that writes the summary (``[compaction] summary = "model"``): the
        session's own; None for the extractive summary."""
        config = self.runtime.config
        chosen = config.backend(self.session.model.active)
        if config.compaction.summary != "model" or chosen.provider == "replay":
            return None
        try:
            return create_backend(chosen, config.limits, client=self.runtime.http)
        except ConfigError as exc:
            log.warning("session %s: no model summary: %s", self.session.id, exc)
            return None

    async def _keep(self, cid: str, compaction: Compaction) -> None:
        """Store the compaction point and the transcript's marker; tell the user."""
        done = completed_line(cid, compaction)
        sid = self.session.id
        values = {RECORD_KEY: self.session.conversation.record().to_json()}

        def keep(db: SessionDatabase) -> None:  # one trip to the store's thread
            db.update(sid, config_values=values)
            db.append(sid, updates=[done])

        await self.runtime.store.call(keep)
        if self.runtime.compaction_updates:
            self.session.services.outbox.update(done)
        elif self.runtime.notices:
            severity: Severity = "warning" if compaction.cuts else "info"
            self.session.services.outbox.update(notice(compaction.describe(), severity, _UNCHANGED))
        else:
            await self._say(compaction.describe())

    def _show(self, cid: str, status: str, error: str | None = None) -> None:
        if not self.runtime.compaction_updates:
            return
        self.session.services.outbox.update(compaction_update(cid, status, error=error))


def completed_line(cid: str, compaction: Compaction) -> CompactionUpdate:
    """The ``compaction_update`` of a finished compaction, its summary for people."""
    text = compaction.describe()
    if compaction.summary_text:
        text += "\n\n" + compaction.summary_text
    return compaction_update(cid, "completed", summary=[{"type": "text", "text": text}])


__all__ = [
    "Compactor",
    "completed_line",
    "meter",
]

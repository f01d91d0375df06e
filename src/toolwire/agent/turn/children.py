"""The ``Task`` calls of one turn: their children started together, awaited in order.

``Turn`` asks ``Children`` three things: ``offer`` at the turn's start (the agent types
read again, ``Task`` offered to the model unless the session is a child itself),
``start`` once a response's calls are known (every ``Task`` call of it starts its child
at once, before the other calls run in their order), and ``result`` where the ``Task``
call's turn comes. ``stop`` ends every child still running (a cancel of the parent ends
them within a second, each of their calls ended once, as cancelled). ``Children.replay``
is the other side, with no turn: a ``session/load`` of the parent shows its children again.

What the editor sees of a child (``turn.child`` says what the child is): a client that
advertised ``subagents`` gets a ``subagent_update`` on the parent's session first, then
the child's updates on the child's ``sessionId``; any other client the parent's ``Task``
call with a live digest of the child's calls (``turn.digest``). Its permission requests
go to the parent's session, the title naming the child, whichever client it is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.agent.features.agent_types import DEFAULT_TYPE, TASK, AgentTypes, load_agent_types
from toolwire.agent.protocol.outbox import LineSink, Outbox, Ticker
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store.transcript import replayed
from toolwire.agent.turn.child import Child, MakeTurn, answer, child_runtime, make_child
from toolwire.agent.turn.collect import CollectedCall
from toolwire.agent.turn.digest import DigestSink
from toolwire.config import ConfigError
from toolwire.history import ToolResultPart
from toolwire.updates.builders import SubagentState, subagent_update
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.wire import text_content

log = logging.getLogger("toolwire.agent")
CANCEL_WAIT_S = 1.0


class Children:
    """The children of one parent turn (module doc)."""

    def __init__(
        self,
        session: Session,
        runtime: Runtime,
        engine: UpdateEngine,
        ticker: Ticker,
        make_turn: MakeTurn,
    ) -> None:
        self.session = session
        self.runtime = runtime
        self.engine = engine
        self.ticker = ticker
        self.make_turn = make_turn
        self.types = AgentTypes()
        self.gate = asyncio.Semaphore(runtime.config.subagents.max_parallel)
        self.running: dict[str, asyncio.Task[ToolResultPart]] = {}
        self.children: dict[str, Child] = {}

    async def offer(self) -> None:
        """Read the agent types again and offer ``Task`` (never to a child)."""
        session = self.session
        if session.who.parent is not None:
            session.turn.offer_task(None)
            return
        self.types = await asyncio.to_thread(load_agent_types, session.who.cwd)
        session.turn.offer_task(self.types.spec())
        for line in self.types.skipped:
            if session.services.told.first(line):
                log.warning("session %s: %s", session.id, line)
                session.services.notifier.notice(line)

    def start(self, calls: Sequence[CollectedCall], lives: Mapping[str, ToolCallLifecycle]) -> None:
        """Start the child of every ``Task`` call among ``calls`` (``lives`` by call id)."""
        if self.session.turn.task_tool is None:  # not offered: a child, or before offer
            return
        tasks = [c for c in calls if c.name == TASK and c.error is None]
        for call in tasks:
            life = lives[call.id]
            work = self._child(call, life, len(tasks))
            self.running[call.id] = asyncio.ensure_future(work)

    def owns(self, call: CollectedCall) -> bool:
        return call.id in self.running

    async def result(self, call: CollectedCall) -> ToolResultPart:
        """The ``Task`` call's result once its child is done. A cancel of the parent meanwhile
        stops every child first (``stop``), then goes on."""
        task = self.running[call.id]
        try:
            await asyncio.wait({task})  # never cancels the child with this waiter
        except asyncio.CancelledError:
            await self.stop()
            raise
        return task.result()

    async def stop(self) -> None:
        """End every child still running; each ends its own calls (``CANCEL_WAIT_S`` at most)."""
        for child in self.children.values():
            await child.cancel()
        pending = [t for t in self.running.values() if not t.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=CANCEL_WAIT_S)
            for task in late:
                task.cancel()
        for task in self.running.values():
            if task.done() and not task.cancelled() and task.exception() is not None:
                log.error("a subagent failed", exc_info=task.exception())

    @staticmethod
    async def replay(session: Session, runtime: Runtime) -> None:
        """``session/load`` of a parent, for a client with ``subagents``: each child announced,
        then its stored updates on its own ``sessionId``. (Any other client has the digest on
        the parent's ``Task`` calls, which its own transcript keeps.)"""
        if not runtime.subagents:
            return
        sid = session.id

        def read(db: Any) -> list[tuple[str, str | None, list[dict[str, Any]]]]:
            out = []
            for cid in db.children(sid):
                record = db.get(cid)
                out.append((cid, None if record is None else record.title, db.updates(cid)))
            return out

        for cid, title, updates in await runtime.store.call(read):
            idle = subagent_update(cid, title, {"state": "idle"}, described=False)
            session.services.outbox.update(idle)
            outbox = Outbox(session.services.outbox.sink, cid)
            for update in updates:
                outbox.update(replayed(update, compaction=runtime.compaction_updates))

    async def _child(
        self, call: CollectedCall, life: ToolCallLifecycle, share: int
    ) -> ToolResultPart:
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        checked = self._checked(args)
        if isinstance(checked, str):
            return self._failed(call, life, checked)
        kind_name, backend, words = checked
        kind = self.types.get(kind_name)
        assert kind is not None  # _checked found it
        life.run()
        self._send(life)
        digest: DigestSink | None = None
        sink: LineSink
        if self.runtime.subagents:
            sink = self.session.services.outbox.sink
        else:
            limit = self.runtime.config.limits.max_live_output_bytes
            digest = sink = DigestSink(lambda: self._show(life, digest, limit))
        try:
            child = await make_child(
                self.session, self.runtime, kind, backend, words, self.gate, sink, self._started
            )
        except ConfigError as exc:
            return self._failed(call, life, f"The backend {backend!r} cannot be used: {exc}")
        self.children[call.id] = child
        try:
            await child.run(child_runtime(self.runtime), self.make_turn, self._timeout())
        finally:
            if self.runtime.subagents:
                self._announce(child, {"state": "idle", "stopReason": child.stop or "cancelled"})
        got = answer(child, self.session, self.runtime, share)
        shown = [text_content(digest.text(self._bound()))] if digest and digest.lines() else []
        if got.failed:
            life.set_content(shown)
            life.fail(f"{got.head}\n\n{got.said}".strip())
        else:
            life.complete(content=[*shown, text_content(got.said)])
        self._send(life)
        return ToolResultPart(call.id, call.name, got.text(), is_error=got.failed)

    def _checked(self, args: Mapping[str, Any]) -> tuple[str, str, dict[str, str]] | str:
        """(type, backend, words) for valid arguments; else the error for the model."""
        prompt, words = args.get("prompt"), args.get("description", "")
        if not isinstance(prompt, str) or not prompt.strip():
            return "Task needs a prompt: the whole task, in words the subagent can act on."
        kind_name = args.get("subagent_type") or DEFAULT_TYPE
        kind = self.types.get(kind_name) if isinstance(kind_name, str) else None
        if kind is None:
            known = ", ".join(t.name for t in self.types.types)
            return f"There is no subagent type {kind_name!r}; use one of {known}."
        config = self.runtime.config
        backend = args.get("model") or kind.model or self.session.model.active
        if not isinstance(backend, str) or backend not in config.backends:
            known = ", ".join(config.backends)
            return f"There is no backend {backend!r}; use one of {known}."
        text = words if isinstance(words, str) else ""
        return kind.name, backend, {"description": text, "prompt": prompt}

    def _started(self, child: Child) -> None:
        if self.runtime.subagents:
            self._announce(child, {"state": "running"})

    def _announce(self, child: Child, state: SubagentState) -> None:
        """``subagent_update`` on the parent's session (before any traffic of the child)."""
        label, description = child.session.who.label, child.description or None
        update = subagent_update(child.id, label, state, description=description)
        self.ticker.send(self.engine.flush())  # the parent's held updates go first
        self.session.services.outbox.update(update)

    def _show(self, life: ToolCallLifecycle, digest: DigestSink | None, limit: int) -> None:
        if digest is not None and life.stage != "end":
            life.set_content([text_content(digest.text(limit))])
            self._send(life)

    def _send(self, life: ToolCallLifecycle) -> None:
        self.ticker.send(self.engine.update(life))

    def _failed(self, call: CollectedCall, life: ToolCallLifecycle, message: str) -> ToolResultPart:
        life.fail(message)
        self._send(life)
        return ToolResultPart(call.id, call.name, message, is_error=True)

    def _bound(self) -> int:
        return self.runtime.config.limits.max_live_output_bytes

    def _timeout(self) -> float:
        return self.runtime.config.subagents.timeout


__all__ = ["CANCEL_WAIT_S", "Children"]

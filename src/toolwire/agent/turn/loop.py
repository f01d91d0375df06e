"""The agent loop: one ``session/prompt`` turn, from the prompt to its ``stopReason``.

prompt -> model stream -> ``ResponseTranslator`` (text, thoughts, tool calls started
early and refined as they stream) -> the calls run (``execute``) -> results back to the
model -> again, until the model ends its turn. The stop reason is right in every case:

``end_turn``           the model finished (also after a failure it was told about);
``max_tokens``         the response was cut at the output limit;
``max_turn_requests``  ``limits.max_turn_requests`` model requests in this turn;
``refusal``            the model refused;
``cancelled``          ``session/cancel`` (or a permission answered ``cancelled``).

Failures never end the session (docs/agent.md "The turn"). An error before the first
byte (a 4xx, a missing key) and a stream that breaks mid-way are told to the user as a
message of their own; open calls end ``failed``; the history stays well formed (every
call answered) for the next prompt. Each model response is saved, with
its consolidated transcript, as soon as its calls are done, so a crash loses little.

A session's turn is in one phase at a time (``turn_state.TurnState``, on the session):
``idle -> running -> (cancelling ->) idle``, moved only through its table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from toolwire.agent.features.compaction import Compactor, meter
from toolwire.agent.features.plan import GO_AHEAD, Modes
from toolwire.agent.features.rewind import Rewinder
from toolwire.agent.features.switch import Switcher
from toolwire.agent.protocol.ids import new_message_id
from toolwire.agent.protocol.outbox import Ticker
from toolwire.agent.session import mcp_calls
from toolwire.agent.session.hooks import SessionHooks
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.session.turn_state import PromptStopReason
from toolwire.agent.store.database import SessionDatabase
from toolwire.agent.store.transcript import paragraph, step_updates
from toolwire.agent.turn.children import Children
from toolwire.agent.turn.execute import Executor, PermissionCancelledError
from toolwire.agent.turn.hooked import TurnHooks
from toolwire.agent.turn.prompt import Prompt
from toolwire.agent.turn.request import Requests, Step, failure_text, stream_step
from toolwire.backends import ModelRequest, TappableBackend
from toolwire.config import ConfigError
from toolwire.context import ContextMeter, is_context_overflow
from toolwire.context.overflow import counted_tokens, window_limit
from toolwire.conversation import RECORD_KEY
from toolwire.errors import HTTPStatusError, TransportError
from toolwire.history import Message, ToolResultPart, tool_results, user
from toolwire.updates.engine import UpdateEngine

log = logging.getLogger("toolwire.agent")

_STOPS: dict[str | None, PromptStopReason] = {"max_tokens": "max_tokens", "refusal": "refusal"}
_CANCELLED = "Cancelled by the user before it ran."


class Turn:
    """One prompt turn of a session (a fresh engine: metrics and held state per turn)."""

    def __init__(self, session: Session, runtime: Runtime) -> None:
        loop = asyncio.get_running_loop()
        self.session = session
        self.runtime = runtime
        self.state = session.turn
        self.engine = UpdateEngine(
            session.id, profile=runtime.profile, clock=loop.time, message_ids=new_message_id
        )
        self.ticker = Ticker(self.engine, session.services.outbox)
        self.executor = Executor(session, runtime, self.engine, self.ticker)
        self.children = Children(session, runtime, self.engine, self.ticker, Turn)
        self.requests = Requests(session, runtime)
        self.step: Step | None = None
        self.hooks = TurnHooks(SessionHooks(session, runtime))
        self.prompt = Prompt(session, runtime, self._say, self._tell, self.hooks)

    async def run(self, blocks: list[Any]) -> PromptStopReason:
        """Run the turn; always returns (exactly once) a stop reason."""
        return await self._guarded(self._prompted(blocks))

    async def run_steps(self) -> PromptStopReason:
        """Run a subagent's turn: its prompt is already its history (``turn.child``)."""
        return await self._guarded(self._offered_steps())

    async def _prompted(self, blocks: list[Any]) -> PromptStopReason:
        ended = await self.prompt.start(blocks)
        if ended is not None:  # a built-in command, no backend, or a hook blocked it
            return ended
        # Offered before a switch sizes its handoff: it counts what the request carries.
        await self.children.offer()
        if self.session.model.pending != self.session.model.active or self.session.model.rerouted:
            at = len(self.session.history) - 1
            switched = await Switcher(self.session, self.runtime).switch(at)
            await self._say(switched)
        stop = await self._steps()
        if stop == "end_turn":
            stop = await self.hooks.stop(self._go_on)
        if stop == "end_turn" and self.session.rules.mode == "plan":
            stop = await self._after_plan()
        return stop

    async def _guarded(self, work: Coroutine[Any, Any, PromptStopReason]) -> PromptStopReason:
        """``work``'s stop reason; whatever happens, the turn ends cleanly (module doc)."""
        stop: PromptStopReason
        try:
            stop = await work
        except PermissionCancelledError:
            self.state.move("cancel")  # a client may answer "cancelled" before its cancel
            stop = "cancelled"
        except asyncio.CancelledError:
            if not self.state.cancelling:
                raise  # not session/cancel: the connection is going away
            stop = "cancelled"
        except ConnectionError:  # the client left while we waited on it: end quietly
            log.info("session %s: the client went away mid-turn", self.session.id)
            stop = "end_turn"
        except Exception as exc:  # a bug in toolwire: say so, keep the session usable
            log.exception("session %s: the turn failed", self.session.id)
            await self._say(f"toolwire hit an internal error and stopped this turn ({exc}).")
            stop = "end_turn"
        await self.children.stop()  # none outlives the turn that started it
        await self._close_step(None if stop == "cancelled" else "the turn was stopped early")
        self.ticker.send(self.engine.flush())
        self.ticker.stop()
        await self.session.services.outbox.drain()
        if self.prompt.number is not None:  # however the turn ended: what it left on disk
            await Rewinder(self.session, self.runtime).prompt_ended(self.prompt.number)
        log.debug("session %s: turn metrics\n%s", self.session.id, self.engine.metrics().table())
        return "cancelled" if self.state.cancelling else stop

    async def _after_plan(self) -> PromptStopReason:
        """Plan mode's end of turn: on the user's yes, go on in ``accept-edits``. Asked
        only when the model's last message has text (a plan), not after a failure."""
        last = self.session.history[-1] if self.session.history else None
        if last is None or last.role != "assistant" or not last.text().strip():
            return "end_turn"
        self.ticker.send(self.engine.flush())
        if not await Modes(self.session, self.runtime).ask_to_go():
            return "end_turn"
        return await self._go_on(GO_AHEAD)

    async def _go_on(self, text: str) -> PromptStopReason:
        """The turn goes on with ``text`` as the user's next message (stored)."""
        message = user(text)
        self.session.history.append(message)
        sid = self.session.id
        await self.runtime.store.call(lambda db: db.append(sid, messages=[message]))
        return await self._offered_steps()

    async def _offered_steps(self) -> PromptStopReason:
        await self.children.offer()
        return await self._steps()

    async def _steps(self) -> PromptStopReason:
        limit = self.runtime.config.limits.max_turn_requests
        for _ in range(limit):
            for steer in self.session.turn.take():  # sent while the turn ran
                await self.prompt.steered(steer.blocks)
            step = await self._respond()
            if step is None:
                return "end_turn"
            stop = step.collector.stop_reason
            if stop == "tool_use":
                calls = step.collector.ordered_calls()
                lives = {c.id: step.translator.calls[step.guard.acp_id(c.id)] for c in calls}
                self.children.start(calls, lives)  # one response's Task calls start together
                for call in calls:
                    if self.children.owns(call):
                        step.results[call.id] = await self.children.result(call)
                    else:
                        step.results[call.id] = await self.executor.execute(call, lives[call.id])
                images = any(r.images for r in step.results.values())
                await self.prompt.images_notice(self.session.model.active, images=images)
                await self._save_step()
                continue
            if stop in (None, "error"):
                errors = step.collector.errors or ["the response ended without finishing"]
                await self._say(f"The model's response broke off: {errors[-1]}. You can ask again.")
            await self._close_step(_not_run(stop))
            return _STOPS.get(stop, "end_turn")
        await self._say(
            f"Stopped after {limit} model requests in one turn (limits.max_turn_requests)."
        )
        return "max_turn_requests"

    async def _respond(self) -> Step | None:
        """One model request, streamed to the editor; None if it failed before any byte.

        The request is compacted first when it would come too close to the window, and
        once more, then sent again, when the provider refuses it as too long anyway; an
        image the provider refuses becomes its note, and the request is sent again once.
        """
        session = self.session
        try:
            backend = self.requests.backend()
        except ConfigError as exc:
            await self._say(f"The model backend {session.model.active!r} cannot be used: {exc}")
            return None
        gauge = meter(session, self.runtime.config)
        request, raw = await self._sized(gauge)
        for retry in (False, True):
            step = self.step = self.requests.new_step(self.engine)
            try:
                usage = await stream_step(
                    backend, request, step, self.ticker, session, self.requests.record_issued
                )
            except HTTPStatusError as exc:
                again = None if retry else await self._retried(exc, backend, request, raw, gauge)
                if again is not None:
                    request, raw = again
                    continue
                overflow = is_context_overflow(exc.status, exc.message, exc.code)
                await self._failed(backend, exc, overflow=overflow)
                return None
            except TransportError as exc:  # before the first byte, by the backend contract
                await self._failed(backend, exc, overflow=False)
                return None
            price = self.runtime.config.backend(session.model.active).price_per_mtok
            gauge.observe(raw, usage, backend.wire_format, price)
            session.services.outbox.update(gauge.update())
            return step
        return None

    async def _sized(self, gauge: ContextMeter) -> tuple[ModelRequest, int]:
        """The request to send, compacted first when it would come too close to the window."""
        compaction = self.runtime.config.compaction
        await mcp_calls.ready(self.session)  # its servers' tools are in the request
        request, raw = self.requests.build(gauge)
        over = compaction.enabled and gauge.estimate(raw) > gauge.limit(compaction.threshold)
        if over and await self._compactor().run() is not None:
            return self.requests.build(gauge)
        return request, raw

    async def _retried(
        self,
        exc: HTTPStatusError,
        backend: TappableBackend,
        request: ModelRequest,
        raw: int,
        gauge: ContextMeter,
    ) -> tuple[ModelRequest, int] | None:
        """The request to send again after the provider refused the first one: compacted
        when it was too long, or with a refused image as its note; None when neither helps.
        Nothing was streamed, so the retry is a step of its own."""
        if is_context_overflow(exc.status, exc.message, exc.code):
            self.step = None
            gauge.refused(raw, counted_tokens(exc.message), window_limit(exc.message))
            if await self._compactor().run(squeeze=0.75) is not None:
                return self.requests.build(gauge)
        if told := await self.requests.note_refused(backend, request, exc):
            self.step = None
            await self._say(told)
            return self.requests.build(gauge)
        return None

    async def _failed(
        self, backend: TappableBackend, exc: TransportError, *, overflow: bool
    ) -> None:
        await self._say(failure_text(backend, exc, overflow=overflow))
        await self._close_step("the request to the model failed")

    def _compactor(self) -> Compactor:
        return Compactor(self.session, self.runtime, self._tell)

    async def _tell(self, text: str) -> None:
        """``_say`` for a message the transcript keeps in another form (a compaction)."""
        await self._say(text, store=False)

    async def _say(self, text: str, *, store: bool = True) -> None:
        """A message from toolwire itself (not the model's): its own ``messageId``.

        What is stored for ``session/load`` is the update that was sent, same id.
        """
        self.engine.end_message()
        notes = self.engine.text(paragraph(text))
        self.ticker.send(notes)
        self.engine.end_message()
        said = [note.update for note in notes if note.kind == "agent_message_chunk"]
        if not store:
            return
        if self.step is not None:
            self.step.tail.extend(said)
        elif said:
            sid = self.session.id
            await self.runtime.store.call(lambda db: db.append(sid, updates=said))

    async def _close_step(self, reason: str | None) -> None:
        """End what the current response left open (``None``: cancelled), then save it."""
        step = self.step
        if step is None:
            return
        if reason is None:
            self.ticker.send(step.translator.cancel())
        else:
            open_calls = [c for c in step.translator.calls.values() if c.stage != "end"]
            for call in open_calls:
                call.fail(f"Not run: {reason}.")
            if open_calls:
                self.ticker.send(self.engine.update(*open_calls))
        text = _CANCELLED if reason is None else f"Not run: {reason}."
        for made in step.collector.ordered_calls():
            if made.id not in step.results:
                step.results[made.id] = ToolResultPart(made.id, made.name, text, is_error=True)
        await self._save_step()

    async def _save_step(self) -> None:
        step, self.step = self.step, None
        if step is None:
            return
        message = step.collector.message(self.session.model.active)
        messages: list[Message] = []
        if message is not None:
            messages.append(message)
            results = [step.results[c.id] for c in message.tool_calls() if c.id in step.results]
            if results:
                messages.append(tool_results(results))
        updates = step_updates(
            message, step.guard.acp_id, self.engine, step.results, self.executor.plan
        )
        self.executor.plan = None
        sid, saved, ids = self.session.id, [*updates, *step.tail], step.guard.issued()
        # The meter learned from this response: another process continues with it too.
        record = self.session.conversation.unsaved()
        values = {} if record is None else {RECORD_KEY: record.to_json()}

        def save(db: SessionDatabase) -> None:  # one trip to the store's thread
            db.append(sid, messages=messages, updates=saved, call_ids=ids)
            if values:
                db.update(sid, config_values=values)

        await self.runtime.store.call(save)
        self.session.history.extend(messages)


def _not_run(stop: str | None) -> str:
    """Why calls of a response that did not end in ``tool_use`` were not run."""
    if stop == "max_tokens":
        return "the response was cut at the output token limit"
    if stop in (None, "error"):
        return "the model's response failed before the call could run"
    return "the model ended its turn"


__all__ = ["PromptStopReason", "Turn"]

"""One subagent: a session of its own, made for one ``Task`` call and run by its own turn.

What it has of its parent: the working directories and their file and terminal ports,
the instruction files, the mode and the session's "always"/"never" answers (the same
sets, so an "always allow" given in either holds in both). What it does not: the
parent's history (its conversation is its prompt alone), ``Task`` (no grandchildren),
and the parent's MCP servers. Its backend is the ``model`` argument, else its type's,
else the parent's; any configured backend, whatever its provider.

Each model request it makes waits for a place at the turn's gate
(``[subagents] max_parallel`` requests at once). It stops after ``max_steps`` requests
or ``timeout`` seconds. What the parent gets back (``answer``): its final text, then the
tool context of its history through ``toolwire.handoff`` (files read, changes, commands:
verbatim, deduplicated, under a budget), not a retold summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any, Protocol

from acp.schema import TextContentBlock

from toolwire.agent.features.agent_types import AgentType
from toolwire.agent.protocol.outbox import LineSink, Outbox
from toolwire.agent.session.notify import Notifier
from toolwire.agent.session.state import (
    ModelChoice,
    Notices,
    Permissions,
    Runtime,
    Session,
    SessionIdentity,
    SessionServices,
)
from toolwire.agent.session.turn_state import PromptStopReason
from toolwire.agent.store.transcript import user_updates
from toolwire.agent.turn.prompt import TITLED
from toolwire.backends import ModelRequest, TappableBackend, create_backend
from toolwire.backends.base import BackendWrapper, Tap
from toolwire.context import backend_window
from toolwire.conversation import Conversation
from toolwire.events import Event
from toolwire.handoff import plan_handoff
from toolwire.history import Message, user
from toolwire.updates.builders import MessageChunk


class ChildTurn(Protocol):
    """What runs a child: ``turn.loop.Turn`` (handed in, the loop imports this module)."""

    async def run_steps(self) -> PromptStopReason: ...


MakeTurn = Callable[[Session, Runtime], ChildTurn]


class Gated(BackendWrapper):
    """A backend whose requests each wait for a place at ``gate`` first."""

    def __init__(self, inner: TappableBackend, gate: asyncio.Semaphore) -> None:
        super().__init__(inner)
        self.gate = gate

    async def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        async with self.gate, contextlib.aclosing(self.inner.stream(request, tap=tap)) as events:
            async for event in events:
                yield event


@dataclasses.dataclass(slots=True)
class Child:
    """One child session and how it ended."""

    session: Session
    kind: AgentType
    description: str
    stop: PromptStopReason | None = None
    timed_out: bool = False

    @property
    def id(self) -> str:
        return self.session.id

    async def run(self, runtime: Runtime, make_turn: MakeTurn, timeout: float) -> None:
        """Run its turn to the end; ``timeout`` seconds at most (then cancelled)."""
        state = self.session.turn
        task = asyncio.ensure_future(make_turn(self.session, runtime).run_steps())
        state.start(task)

        def expire() -> None:
            self.timed_out = True
            state.cancel()

        deadline = asyncio.get_running_loop().call_later(timeout, expire)
        try:
            self.stop = await task
        finally:
            deadline.cancel()
            state.finish()

    async def cancel(self) -> None:
        """``session/cancel`` of the parent: end its turn (its calls end once, cancelled)."""
        self.session.turn.cancel()


async def make_child(
    parent: Session,
    runtime: Runtime,
    kind: AgentType,
    backend: str,
    args: dict[str, str],
    gate: asyncio.Semaphore,
    sink: LineSink,
    announce: Callable[[Child], None],
) -> Child:
    """A child session for ``args`` (``description``, ``prompt``), stored under the
    parent; its outbox writes to ``sink``, after ``announce``. ``ConfigError`` when
    ``backend`` cannot be used."""
    cid = str(uuid.uuid4())
    description = args["description"]
    label = f"{kind.name} ({description})" if description else kind.name
    impl = Gated(_backend(runtime, backend), gate)
    session = _session(parent, kind, backend, impl, Outbox(sink, cid), label)
    session.services.bind(Notifier(session, runtime))
    text = f"{kind.prompt}\n\n{args['prompt']}" if kind.prompt else args["prompt"]
    message = user(text)
    session.history.append(message)
    updates = user_updates([TextContentBlock(type="text", text=args["prompt"])])
    await _store(parent, runtime, session, message, updates)
    child = Child(session, kind, description)
    announce(child)  # before any line of the child's own
    for update in updates:
        session.services.outbox.update(update)
    return child


def _backend(runtime: Runtime, backend: str) -> TappableBackend:
    """The configured ``backend`` made for the child; ``ConfigError`` when it cannot be."""
    config = runtime.config
    return create_backend(
        config.backend(backend), config.limits, record=runtime.record, client=runtime.http
    )


def _session(
    parent: Session, kind: AgentType, backend: str, impl: Gated, outbox: Outbox, label: str
) -> Session:
    """The child's session: the parent's directories, ports, mode, answers and
    instructions (module doc), its own backend, outbox and tools, no history yet."""
    who, rules = parent.who, parent.rules
    services = SessionServices(
        outbox,
        parent.services.tools,
        parent.services.instructions,
        parent.services.hook_state,  # a file declined in the parent is not asked again
        told=Notices([TITLED]),
    )
    return Session(
        SessionIdentity(
            outbox.session_id,
            who.cwd,
            who.additional_dirs,
            parent=parent,
            label=label,
            tool_names=kind.tool_names(),
        ),
        services,
        ModelChoice(backend, backend=impl),
        Permissions(rules.mode, always=rules.always, never=rules.never),
        Conversation(),
    )


async def _store(
    parent: Session, runtime: Runtime, child: Session, message: Message, updates: list[MessageChunk]
) -> None:
    """Store the child under the parent, its prompt as its first message, in one trip."""
    cid, pid, dirs, label = child.id, parent.id, parent.who.additional_dirs, child.who.label

    def store(db: Any) -> None:
        db.create(
            parent.who.cwd, dirs, session_id=cid, title=label, backend=child.model.active,
            mode=parent.rules.mode, parent_id=pid,
        )  # fmt: skip
        db.append(cid, messages=[message], updates=updates)

    await runtime.store.call(store)


def child_runtime(runtime: Runtime) -> Runtime:
    """The runtime a child runs on: its step limit in place of the turn's."""
    config = runtime.config
    steps = config.subagents.max_steps
    limits = config.limits.model_copy(update={"max_turn_requests": steps})
    return dataclasses.replace(runtime, config=dataclasses.replace(config, limits=limits))


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """What a child gives back: how it ended, its last text, its tool context."""

    head: str
    said: str
    context: str
    failed: bool

    def text(self) -> str:
        """The ``Task`` result the parent's model gets."""
        parts = [self.head, self.said or "(It gave no final answer.)"]
        if self.context:
            parts.append(f"What its tools read, changed and ran (verbatim):\n\n{self.context}")
        return "\n\n".join(parts)


def answer(child: Child, parent: Session, runtime: Runtime, share: int) -> Answer:
    """The child's last text and its tool context (within ``1/share`` of the room the
    parent's window leaves, so the turn's children together fit)."""
    history = child.session.history
    last = next((m for m in reversed(history) if m.role == "assistant" and m.text().strip()), None)
    said = last.text().strip() if last is not None else ""
    config = runtime.config
    window = backend_window(config.backend(parent.model.active), config.limits)
    budget = min(config.handoff.max_tool_context_chars, window.room * 3 // (4 * max(1, share)))
    plan = plan_handoff(
        history,
        cwd=parent.who.cwd,
        keep_last=0,
        max_tool_context_chars=budget,
        max_tool_result_chars=min(config.handoff.max_tool_result_chars, budget),
    )
    head = f"Subagent {child.session.who.label} {_ending(child, runtime)}."
    failed = child.stop != "end_turn" or not said
    return Answer(head, said, plan.tool_context, failed)


def _ending(child: Child, runtime: Runtime) -> str:
    limits = runtime.config.subagents
    if child.timed_out:
        return f"was stopped after {limits.timeout:g} s ([subagents] timeout)"
    if child.stop == "max_turn_requests":
        return f"was stopped after {limits.max_steps} model requests ([subagents] max_steps)"
    if child.stop == "cancelled":
        return "was cancelled"
    return "finished"


__all__ = [
    "Answer",
    "Child",
    "ChildTurn",
    "Gated",
    "MakeTurn",
    "answer",
    "child_runtime",
    "make_child",
]

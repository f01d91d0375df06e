"""Steering: a message the user sends while a turn runs joins that turn.

Instead of refusing a second ``session/prompt`` (one turn at a time), the agent queues
its blocks on the session; the running turn takes the queue before each model request
(``Turn``: kept in the history and the transcript as the user's message), so the model
reads it as soon as it next looks. The waiting prompt is answered with the turn's stop
reason when the turn ends. A message the turn never took (it made no request after it
came) was not answered by anyone: it then runs as a turn of its own.

The ``_session/steering`` extension request (the contract claude-agent-acp and
codex-acp serve, advertised as ``_meta.steering.supported`` in ``initialize``) queues the
same way and answers at once: ``injected`` into a running turn, or ``startedNewTurn``
when none runs (the turn's own answer then goes to no request).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Final

from toolwire.agent.session.state import Session
from toolwire.agent.session.turn_state import PromptStopReason

#: The extension method, as a client sends it (the SDK strips the underscore).
STEERING_METHOD: Final = "_session/steering"


@dataclass(eq=False)
class Steer:
    """One queued message; ``joined`` resolves to the stop reason of the turn that took
    it, or None when no turn took it."""

    blocks: list[Any]
    joined: asyncio.Future[PromptStopReason | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def running(session: Session) -> bool:
    """A turn runs that may still take a message (not one being cancelled)."""
    return session.turn.phase == "running"


def queue(session: Session, blocks: list[Any]) -> Steer:
    """Queue ``blocks`` for the running turn's next model request."""
    steer = Steer(list(blocks))
    session.steering.append(steer)
    return steer


def take(session: Session) -> list[Steer]:
    """The queued messages, now part of the running turn."""
    taken, session.steering = session.steering, []
    session.steered += taken
    return taken


def settle(session: Session, stop: PromptStopReason) -> None:
    """The turn ended with ``stop``: the messages it took are answered with it; those it
    did not take are handed back (None), to run as turns of their own."""
    taken, session.steered = session.steered, []
    left, session.steering = session.steering, []
    for steer in taken:
        if not steer.joined.done():
            steer.joined.set_result(stop)
    for steer in left:
        if not steer.joined.done():
            steer.joined.set_result(None)


__all__ = ["STEERING_METHOD", "Steer", "queue", "running", "settle", "take"]

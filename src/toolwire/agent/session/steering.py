"""Steering: a message the user sends while a turn runs joins that turn.

Instead of refusing a second ``session/prompt`` (one turn at a time), the agent queues
its blocks on the session's ``TurnState``; the running turn takes the queue before each
model request
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

from typing import Final

from toolwire.agent.session.turn_state import Steer

#: The extension method, as a client sends it (the SDK strips the underscore).
STEERING_METHOD: Final = "_session/steering"

__all__ = ["STEERING_METHOD", "Steer"]

"""The agent's methods beyond ACP v1's stable set: ``_session/steering``, the
unstable ``providers/*``, ``_toolwire/session/rewind``, ``session/delete`` and v2's
``auth/logout`` (which the transport hands to ``ToolwireAgent.ext_method``, which hands
them to ``route``).

Steering (``toolwire.agent.session.steering``) queues a message for the running turn,
or starts a turn no request waits for; such turns are kept here until done and
cancelled when the client goes away. ``providers/*`` (``features.providers``) put a new
configuration in force for every session of the connection and send each its model
options again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from acp.exceptions import RequestError
from acp.schema import PromptRequest

from toolwire.agent.auth import logout
from toolwire.agent.features import providers
from toolwire.agent.features.providers import Providers
from toolwire.agent.features.rewind_method import REWIND_METHOD, RewindMethod
from toolwire.agent.lifecycle import Lifecycle
from toolwire.agent.protocol.transport import PROVIDER_METHODS
from toolwire.agent.protocol.v2 import LOGOUT_METHOD
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.session.steering import STEERING_METHOD

log = logging.getLogger("toolwire.agent")

#: Runs a prompt turn in a session: ``ToolwireAgent``'s own prompt handling.
PromptRunner = Callable[[str, list[Any]], Coroutine[Any, Any, Any]]


class Extensions:
    """Steering, providers and the other extension methods for one connection (module doc)."""

    def __init__(self, prompt: PromptRunner) -> None:
        self.providers = Providers()
        self._prompt = prompt
        self._detached: set[asyncio.Task[Any]] = set()

    async def route(
        self, method: str, params: dict[str, Any], sessions: Lifecycle
    ) -> dict[str, Any]:
        """One extension method's answer; an unknown one is ``method_not_found``."""
        if method == "session/delete":
            session_id = params.get("sessionId")
            if not isinstance(session_id, str):
                raise RequestError.invalid_params({"sessionId": "a session id is required"})
            return await sessions.delete(session_id)
        if method == REWIND_METHOD:
            return await RewindMethod(sessions.live_for(params), sessions.runtime()).answer(params)
        if method == STEERING_METHOD[1:]:
            return await self.steer(sessions.live_for(params), params)
        if method == LOGOUT_METHOD[1:]:
            forgotten = await asyncio.to_thread(logout)
            log.info("auth/logout: %d stored key(s) forgotten", len(forgotten))
            return {}
        if method in PROVIDER_METHODS:
            runtime = sessions.runtime()
            live = list(sessions.by_id.values())
            answer = await self.provider_method(method, params, runtime, live)
            sessions.config = runtime.config
            return answer
        raise RequestError.method_not_found(f"_{method}")

    async def steer(self, session: Session, params: dict[str, Any]) -> dict[str, Any]:
        """``_session/steering``: into the running turn, or a turn of its own."""
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not blocks:
            raise RequestError.invalid_params({"prompt": "a non-empty list of content blocks"})
        prompt = PromptRequest.model_validate({"sessionId": session.id, "prompt": blocks}).prompt
        if not session.turn.running:
            self._detach(self._prompt(session.id, prompt))
            return {"outcome": "startedNewTurn"}
        steer = session.turn.queue(prompt)

        async def leftover() -> None:  # the turn ended before taking it: a turn of its own
            if await steer.joined is None:
                await self._prompt(session.id, prompt)

        self._detach(leftover())
        return {"outcome": "injected"}

    async def provider_method(
        self, method: str, params: dict[str, Any], runtime: Runtime, sessions: list[Session]
    ) -> dict[str, Any]:
        """``providers/list``, ``set`` or ``disable``; ``runtime.config`` updated."""
        if method == "providers/list":
            return self.providers.list(runtime.config)
        if method == "providers/set":
            runtime.config = self.providers.set(runtime.config, params)
            providers.rerouted(sessions, str(params["providerId"]))
        else:
            name = self.providers.disable(runtime.config, params)
            await providers.moved_off(sessions, runtime, name)
        for session in sessions:
            session.services.notifier.options_changed()
        return {}

    def aclose(self) -> None:
        """The client went away: no detached turn goes on."""
        for task in list(self._detached):
            task.cancel()

    def _detach(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` with no request waiting for it (kept until done)."""
        task = asyncio.create_task(work)
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)


__all__ = ["Extensions", "PromptRunner"]

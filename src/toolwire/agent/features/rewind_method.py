"""The extension method ``_toolwire/session/rewind``: ``/rewind`` for a client's button.

Params ``{"sessionId", "prompt", "scope"}`` and an optional ``"force"``; ``prompt`` is a
prompt number, or ``"undo"``. The answer is ``RewindReport.wire()``. As with the
command, the transcript keeps a marker (so ``session/load`` shows the rewind), and the
client is sent the same line now. Advertised in ``initialize``'s
``agentCapabilities._meta`` (``handshake.REWIND_METHOD``); the SDK hands the method
over without its leading underscore.
"""

from __future__ import annotations

from typing import Any, Final

from acp.exceptions import RequestError

from toolwire.agent.features.rewind import Rewinder
from toolwire.agent.features.rewind_report import SCOPES, Ask, RewindInputError, RewindReport
from toolwire.agent.protocol.handshake import REWIND_METHOD as ADVERTISED
from toolwire.agent.store.transcript import agent_message

REWIND_METHOD: Final = ADVERTISED.removeprefix("_")
"""The method as ``ext_method`` receives it."""


class RewindMethod(Rewinder):
    """A ``Rewinder`` answering the extension method (module doc)."""

    __slots__ = ()

    async def answer(self, params: dict[str, Any]) -> dict[str, Any]:
        """Run the rewind ``params`` ask for; invalid params and bad numbers are
        ``invalid_params`` errors whose message says what to send."""
        if self.session.turn.phase != "idle":
            raise RequestError.invalid_request({"message": "a prompt is running: rewind after it"})
        try:
            ask = _ask(params)
            report = await (self.undo() if ask.kind == "undo" else self.rewind(ask))
        except RewindInputError as exc:
            raise RequestError.invalid_params({"prompt": str(exc)}) from None
        await self._mark(report)
        return report.wire()

    async def _mark(self, report: RewindReport) -> None:
        """The rewind's line, stored after the cut (the marker) and sent to the client."""
        session = self.session
        update = agent_message(report.text(session.who.cwd))
        await self.runtime.store.call(lambda db: db.append(session.id, updates=[update]))
        session.services.outbox.update(update)
        await session.services.outbox.drain()


def _ask(params: dict[str, Any]) -> Ask:
    prompt, scope, force = params.get("prompt"), params.get("scope", "both"), params.get("force")
    if scope not in SCOPES:
        raise RewindInputError(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    if force is not None and not isinstance(force, bool):
        raise RewindInputError("force: true or false")
    if prompt == "undo":
        return Ask("undo")
    if type(prompt) is not int or prompt < 1:
        raise RewindInputError(f'prompt {prompt!r}: a prompt number from 1, or "undo"')
    return Ask("rewind", prompt, scope, bool(force))


__all__ = ["REWIND_METHOD", "RewindMethod"]

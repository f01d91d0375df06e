"""MCP elicitation in a session: a server's question asked of the editor, or declined.

An editor that advertises ``clientCapabilities.elicitation.form`` (``.url`` for a URL
question) gets the question as ACP ``elicitation/create``, tied to the session, and its
answer (accept with content, decline, cancel) goes back to the server as is. An editor
that does not cannot show it: the question is declined, and the user told in one line
which server asked what, so a tool that fails for want of an answer is not a mystery.
A question the editor's SDK model cannot carry (a schema outside ACP's primitive
properties) or a request that fails is declined the same way.
"""

from __future__ import annotations

import logging
from typing import Any

from acp.schema import ElicitationFormSessionMode, ElicitationSchema, ElicitationUrlSessionMode
from pydantic import ValidationError

from toolwire.agent.session.state import Runtime, Session
from toolwire.mcp.elicit import Action, Elicitation

log = logging.getLogger("toolwire.agent")
_ACTIONS: dict[str, Action] = {"accept": "accept", "decline": "decline", "cancel": "cancel"}


class Questions:
    """Where one session's MCP servers' questions go (module doc): call it with a
    question, as an ``Elicitor``."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    async def __call__(self, question: Elicitation) -> tuple[Action, dict[str, Any] | None]:
        """The editor's answer to ``question``, or a decline the user is told about."""
        caps = self.runtime.capabilities.elicitation
        able = caps is not None and (caps.form if question.mode == "form" else caps.url)
        if not able:
            return self._declined(question, "this editor cannot show it")
        sid = self.session.id
        try:
            mode = _mode(sid, question)
            answer = await self.runtime.client.create_elicitation(question.message, mode)
        except (ValidationError, ValueError) as exc:
            log.warning("session %s: MCP question not asked: %s", sid, exc)
            return self._declined(question, "the editor cannot show its form")
        except Exception as exc:  # the editor failed to answer: the server must still hear
            log.warning("session %s: elicitation/create failed: %r", sid, exc)
            return self._declined(question, "the editor did not answer")
        data = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        action = _ACTIONS.get(str(data.get("action")), "cancel")
        content = data.get("content") if action == "accept" else None
        return action, content if isinstance(content, dict) else None

    def _declined(self, question: Elicitation, why: str) -> tuple[Action, None]:
        self.session.services.notifier.notice(
            f"MCP server {question.server!r} asked: {question.message!r}. It was declined: {why}."
        )
        return "decline", None


def _mode(session_id: str, question: Elicitation) -> Any:
    if question.mode == "url":
        return ElicitationUrlSessionMode.model_validate(
            {"sessionId": session_id, "elicitationId": question.elicitation_id, "url": question.url}
        )
    return ElicitationFormSessionMode(
        session_id=session_id,
        requested_schema=ElicitationSchema.model_validate(question.schema or {}),
    )


__all__ = ["Questions"]

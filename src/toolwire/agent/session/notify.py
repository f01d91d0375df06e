"""How toolwire tells a session's user something, and asks them: one path for each.

``Notifier(session, runtime)``, made once per session and held by it
(``session.services.notifier``), has three verbs:

``notice``           a line outside the conversation (an MCP server that did not start):
                     a ``notice`` for a client that advertised ``session.notices``, else
                     an agent message;
``options_changed``  the session's whole set of config options after a change (model,
                     mode, thinking): the one ``config_option_update``; ``mode_changed``
                     sends the ``current_mode_update`` before it;
``ask``              the one ``session/request_permission``, for a tool call and for plan
                     mode's question alike: what the card shows is on the wire before the
                     question (google-gemini/gemini-cli#21783), and the answer is the
                     option chosen, or None when the request was cancelled.

A message in a turn goes through the turn's update engine instead (``Turn._say``), so it
takes its place in the stream and the stored transcript.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from toolwire.agent.session.options import config_options
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store.transcript import agent_message
from toolwire.updates.builders import mode_update, notice, options_update
from toolwire.updates.wire import JsonObject


class Notifier:
    """Telling and asking the user of one session (module doc)."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    def notice(self, text: str) -> None:
        """A warning for the user outside a turn."""
        line = notice(text) if self.runtime.notices else agent_message(text)
        self.session.services.outbox.update(line)

    def options_changed(self) -> None:
        """The session's config options, all of them (ACP replaces the set)."""
        options = config_options(self.session, self.runtime.config)
        self.session.services.outbox.update(options_update(options))

    def mode_changed(self) -> None:
        """The session's mode, then its options (the mode is one of them too)."""
        self.session.services.outbox.update(mode_update(self.session.rules.mode))
        self.options_changed()

    async def ask(self, tool_call: JsonObject, options: Sequence[PermissionOption]) -> str | None:
        """Ask about ``tool_call`` (its ``tool_call`` update already sent); the id of the
        option chosen, None when the client answered ``cancelled``."""
        await self.session.services.outbox.drain()  # the card and its preview precede the question
        session = self.session
        if session.who.parent is not None:  # a subagent asks on its parent's session, named
            title = tool_call.get("title") or tool_call.get("toolCallId")
            tool_call = {**tool_call, "title": f"{session.who.label}: {title}"}
        response = await self.runtime.client.request_permission(
            session_id=session.wire_id,
            tool_call=ToolCallUpdate.model_validate(dict(tool_call)),
            options=list(options),
        )
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None


__all__ = ["Notifier"]

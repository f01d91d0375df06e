"""The end of a turn in ``plan`` mode, and switching a session's mode.

When the model ends its turn in ``plan`` mode (it was told to end with a plan), the user
is asked, through ``session/request_permission``, whether to carry the plan out. The
request needs a tool call of its own, so a ``switch_mode`` card names the question.
Yes: the mode becomes ``accept-edits`` (a ``current_mode_update`` and a
``config_option_update``) and the turn goes on with the user message ``GO_AHEAD``, so
the work starts at once, in the same prompt turn. No: the turn ends; the session stays
in ``plan``.
"""

from __future__ import annotations

import uuid
from typing import Final

from acp.schema import PermissionOption

from toolwire.agent.session.state import Runtime, Session
from toolwire.config.choices import Mode
from toolwire.updates.builders import tool_call, tool_call_update

GO_AHEAD: Final = "Go ahead with the plan."
"""The user message the turn goes on with after the user said yes."""
AFTER_PLAN: Final[Mode] = "accept-edits"
"""The mode the session switches to when the user accepts the plan."""
_GO: Final = "plan_go"
_STAY: Final = "plan_stay"
_CHOICES: Final = (
    PermissionOption(option_id=_GO, name="Switch to accept-edits and go", kind="allow_once"),
    PermissionOption(option_id=_STAY, name="Stay in plan", kind="reject_once"),
)


class Modes:
    """Switching one session's mode, and plan mode's question at the end of a turn."""

    __slots__ = ("runtime", "session")

    def __init__(self, session: Session, runtime: Runtime) -> None:
        self.session = session
        self.runtime = runtime

    async def set(self, mode_id: Mode) -> None:
        """Switch the session's mode (stored), and tell the client both ways."""
        session = self.session
        session.rules.set_mode(mode_id)
        await self.runtime.store.call(lambda db: db.update(session.id, mode=mode_id))
        session.services.notifier.mode_changed()

    async def ask_to_go(self) -> bool:
        """Ask whether to carry out the plan; on yes the mode is ``AFTER_PLAN`` already.

        A cancelled or failed request is a no (the caller's cancel handling still applies).
        """
        session = self.session
        call_id = f"plan-{uuid.uuid4().hex[:12]}"
        session.services.call_ids.add(call_id)
        await self.runtime.store.call(lambda db: db.add_call_ids(session.id, [call_id]))
        title = "Carry out the plan? (switches to Accept edits)"
        card = {"toolCallId": call_id, "title": title, "kind": "switch_mode", "status": "pending"}
        session.services.outbox.update(tool_call(card))
        yes = False
        try:
            yes = await session.services.notifier.ask(card, _CHOICES) == _GO
        finally:
            status = "completed" if yes else "failed"
            session.services.outbox.update(tool_call_update(call_id, status=status))
        if yes:
            await self.set(AFTER_PLAN)
        return yes


__all__ = ["AFTER_PLAN", "GO_AHEAD", "Modes"]

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
from typing import Any, Final

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from toolwire.agent.permissions import MODES
from toolwire.agent.session import Runtime, Session, config_options

GO_AHEAD: Final = "Go ahead with the plan."
"""The user message the turn goes on with after the user said yes."""
AFTER_PLAN: Final = "accept-edits"
"""The mode the session switches to when the user accepts the plan."""
_GO: Final = "plan_go"
_STAY: Final = "plan_stay"


async def set_mode(session: Session, runtime: Runtime, mode_id: str) -> None:
    """Switch the session's mode (stored), and tell the client both ways."""
    if mode_id not in MODES:
        raise ValueError(f"{mode_id!r}; use {', '.join(MODES)}")
    session.mode = mode_id
    await runtime.store.call(lambda db: db.update(session.id, mode=mode_id))
    session.outbox.update({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
    options = config_options(session, runtime.config)
    session.outbox.update({"sessionUpdate": "config_option_update", "configOptions": options})


async def ask_to_go(session: Session, runtime: Runtime) -> bool:
    """Ask whether to carry out the plan; on yes the mode is ``AFTER_PLAN`` already.

    A cancelled or failed request is a no (the caller's cancel handling still applies).
    """
    call_id = f"plan-{uuid.uuid4().hex[:12]}"
    session.call_ids.add(call_id)
    await runtime.store.call(lambda db: db.add_call_ids(session.id, [call_id]))
    title = "Carry out the plan? (switches to Accept edits)"
    card: dict[str, Any] = {"toolCallId": call_id, "title": title, "kind": "switch_mode"}
    session.outbox.update({"sessionUpdate": "tool_call", **card, "status": "pending"})
    await session.outbox.drain()  # the card precedes the request
    yes = False
    try:
        response = await runtime.client.request_permission(
            session_id=session.id,
            tool_call=ToolCallUpdate.model_validate({**card, "status": "pending"}),
            options=[
                PermissionOption(
                    option_id=_GO, name="Switch to accept-edits and go", kind="allow_once"
                ),
                PermissionOption(option_id=_STAY, name="Stay in plan", kind="reject_once"),
            ],
        )
        outcome = response.outcome
        yes = isinstance(outcome, AllowedOutcome) and outcome.option_id == _GO
    finally:
        status = "completed" if yes else "failed"
        session.outbox.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status}
        )
    if yes:
        await set_mode(session, runtime, AFTER_PLAN)
    return yes


__all__ = ["AFTER_PLAN", "GO_AHEAD", "ask_to_go", "set_mode"]

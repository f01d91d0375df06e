"""A command the sandbox refused: what the user is asked, and what the model is told.

A ``Bash`` command that failed because the sandbox refused a write or a connection
(``toolwire.sandbox.refusals``) leads to one question: run it outside the sandbox once,
for the rest of the session, or keep it in. The model's result then says what was
refused and what the user chose, so it does not work around the sandbox blindly.
"""

from __future__ import annotations

import dataclasses

from acp.schema import PermissionOption

from toolwire.agent.session.state import Session
from toolwire.sandbox import Sandbox
from toolwire.tools import LocalTerminal, ToolResult


def sandbox_of(session: Session) -> Sandbox | None:
    """The sandbox the session's commands run in now, None when they run outside."""
    terminal = session.tools.terminal
    if session.unsandboxed or not isinstance(terminal, LocalTerminal):
        return None
    sandbox = terminal.sandbox
    return sandbox if isinstance(sandbox, Sandbox) else None


def asks_not(session: Session) -> bool:
    """Commands run in the sandbox in ``workspace-write`` and ``ask = false``: a ``Bash``
    call needs no question (``turn.policy``, rule 6). Not under Landlock alone, which
    confines writes but neither ``deny_read`` nor the network."""
    sandbox = sandbox_of(session)
    return (
        sandbox is not None
        and sandbox.mechanism == "bwrap"
        and sandbox.config.mode == "workspace-write"
        and not sandbox.config.ask
    )


def refused_by(session: Session, result: ToolResult) -> str | None:
    """What the sandbox refused the command of ``result``, None when it did not."""
    sandbox = sandbox_of(session)
    if sandbox is None or not result.is_error or result.command is None:
        return None
    return sandbox.refused(result.content, result.command.exit_code)


def options() -> list[PermissionOption]:
    """Outside once, outside for the session, or keep it in."""
    return [
        PermissionOption(
            option_id="allow_once", name="Run outside the sandbox once", kind="allow_once"
        ),
        PermissionOption(
            option_id="allow_always",
            name="Run outside the sandbox for this session",
            kind="allow_always",
        ),
        PermissionOption(option_id="reject", name="Keep it in the sandbox", kind="reject_once"),
    ]


def noted(result: ToolResult, what: str, choice: str) -> ToolResult:
    """``result`` with a line for the model: what was refused, and what happened next."""
    if choice == "allow_once":
        then = "the user let this command run outside the sandbox once; this is its result"
    elif choice == "allow_always":
        then = (
            "the user let this session's commands run outside the sandbox; "
            "this is the command's result outside it"
        )
    else:
        then = (
            "the user chose to keep it in the sandbox. Do not try to get around the "
            "sandbox; work inside the session's directories or ask the user"
        )
    line = f"[The sandbox refused {what}; {then}.]"
    return dataclasses.replace(result, content=f"{result.content}\n\n{line}")


__all__ = ["asks_not", "noted", "options", "refused_by", "sandbox_of"]

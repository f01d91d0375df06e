"""A command the sandbox refused: what the user is asked, and what the model is told.

A ``Bash`` command that failed because the sandbox refused a write or a connection
(``toolwire.sandbox.refusals``) leads to one question (unless ``escape = "never"``),
titled with the sandbox and what it refused: run it outside the sandbox once, for the
rest of the session, or keep it in. The first option a client could pick without a
human is "Keep it in the sandbox" (docs/sandbox.md, "Leaving the sandbox"). The model's
result then says what was refused and what the user chose, so it does not work around
the sandbox blindly. A path hidden by ``deny_read`` is said to be hidden, and offers
no way out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from acp.schema import PermissionOption

from toolwire.agent.session.state import Session
from toolwire.sandbox import Sandbox
from toolwire.tools import LocalTerminal, ToolResult


def sandbox_of(session: Session) -> Sandbox | None:
    """The sandbox the session's commands run in now, None when they run outside."""
    terminal = session.services.tools.terminal
    if session.rules.unsandboxed or not isinstance(terminal, LocalTerminal):
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


def may_escape(session: Session) -> bool:
    """Whether a refused command may be offered a run outside (``escape = "ask"``)."""
    sandbox = sandbox_of(session)
    return sandbox is not None and sandbox.config.escape == "ask"


def question(what: str, command: str) -> str:
    """The escape question's title: the sandbox, what it refused, and the command."""
    shown = command if len(command) <= 80 else command[:77] + "..."
    return f"The sandbox refused {what}: run `{shown}` outside it?"


def options() -> list[PermissionOption]:
    """Keep it in (first, and of an allowing kind: what a client that approves every
    request picks), outside once, outside for the session, or refuse."""
    return [
        PermissionOption(option_id="keep", name="Keep it in the sandbox", kind="allow_once"),
        PermissionOption(
            option_id="allow_once", name="Run it outside the sandbox once", kind="allow_once"
        ),
        PermissionOption(
            option_id="allow_always",
            name="Run this session's commands outside the sandbox",
            kind="allow_always",
        ),
        PermissionOption(option_id="reject", name="Do not run it outside", kind="reject_once"),
    ]


def hidden_by(
    session: Session, result: ToolResult, arguments: Mapping[str, Any]
) -> ToolResult | None:
    """``result`` with a note when the failed command reached for a path ``deny_read``
    hides (it sees nothing there, "No such file or directory"); else None."""
    sandbox = sandbox_of(session)
    if sandbox is None or not result.is_error or result.command is None:
        return None
    path = sandbox.hidden_path(result.content, str(arguments.get("command", "")))
    if path is None:
        return None
    line = (
        f"[{path} is hidden from commands by the sandbox ([tools.sandbox] deny_read): "
        "commands see nothing there. Its content is not available; do not try to read "
        "it another way, ask the user if it is needed.]"
    )
    return dataclasses.replace(result, content=f"{result.content}\n\n{line}")


def terminal_notice(why: str) -> str:
    """The one line a session shows when the client refused it a terminal."""
    return (
        f"The editor refused to run commands in its terminal ({why}); this session's "
        "commands run in toolwire's own sandboxed process instead."
    )


def noted(result: ToolResult, what: str, choice: str) -> ToolResult:
    """``result`` with a line for the model: what was refused, and what happened next."""
    if choice == "allow_once":
        then = "the user let this command run outside the sandbox once; this is its result"
    elif choice == "allow_always":
        then = (
            "the user let this session's commands run outside the sandbox; "
            "this is the command's result outside it"
        )
    elif choice == "never":
        then = (
            "running commands outside it is turned off ([tools.sandbox] escape). Do not "
            "try to get around the sandbox; work inside the session's directories or "
            "ask the user"
        )
    else:
        then = (
            "the user chose to keep it in the sandbox. Do not try to get around the "
            "sandbox; work inside the session's directories or ask the user"
        )
    line = f"[The sandbox refused {what}; {then}.]"
    return dataclasses.replace(result, content=f"{result.content}\n\n{line}")


__all__ = [
    "asks_not",
    "hidden_by",
    "may_escape",
    "noted",
    "options",
    "question",
    "refused_by",
    "sandbox_of",
    "terminal_notice",
]

"""The system prompt: who the model is, where it works, how to use the tools, then the
project's instruction files (the same bytes while they are unchanged)."""

from __future__ import annotations

import platform
from typing import Final

from toolwire.agent.session.state import Session


def system_prompt(session: Session) -> str:
    """The session's system prompt (module doc)."""
    who = session.who
    text = session.services.instructions.text
    return compose(who.cwd, who.additional_dirs, text, plan=session.rules.mode == "plan")


def compose(cwd: str, dirs: tuple[str, ...], instructions: str, *, plan: bool) -> str:
    """The system prompt for a session in ``cwd`` (and ``dirs``) with the project's
    ``instructions``; ``plan``: the session is in plan mode."""
    roots = "".join(f"\n- also: {d}" for d in dirs)
    return (
        (
            "You are toolwire, a coding agent working in the user's project through an editor.\n"
            f"Working directory: {cwd}{roots}\n"
            f"Platform: {platform.system()}\n\n"
            "Use the tools to read, search, edit and run things; paths outside the working "
            "directories are refused. Read a file before editing it. Keep answers short and "
            "say what you changed. For work with several steps, keep a TodoWrite list."
        )
        + (f"\n\n{instructions}" if instructions else "")
        + (PLAN_PROMPT if plan else "")
    )


PLAN_PROMPT: Final = (
    "\n\nThe session is in plan mode: read and search as much as you need, but do not "
    "edit files or run commands (they are refused). End your turn by presenting the plan: "
    "the steps, the files each one changes, and how to check the result. The user is then "
    "asked whether to carry it out."
)


__all__ = ["PLAN_PROMPT", "compose", "system_prompt"]

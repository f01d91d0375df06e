"""The offline summary: picked from the history, not written by a model.

Used when no summarizer is configured or its call fails, so a switch never depends on
the network. It keeps what a reader needs first and can be taken verbatim: the user's
first request, their latest one, the assistant's last reply, the files changed, the
errors seen and the calls that never returned. Deterministic: the same head gives the
same text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolwire.handoff.budget import cut_middle
from toolwire.handoff.extract import ToolItem
from toolwire.handoff.render import CLOSE, OPEN
from toolwire.history import Message
from toolwire.updates.titles import display_path

FIRST_REQUEST_CHARS = 1500
LATEST_REQUEST_CHARS = 1000
LAST_REPLY_CHARS = 1500
MAX_ERRORS = 5
MAX_FILES = 30
ERROR_LINE_CHARS = 200
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
_OLD_BLOCK = re.compile(re.escape(OPEN) + r".*?" + re.escape(CLOSE) + r"\s*", re.DOTALL)


def conversational(text: str) -> str:
    """A message's text without what is not conversation.

    Client reminders (``<system-reminder>``, which Claude Code puts in user messages)
    and an earlier handoff block (when a caller stored the context it sent) are left out:
    neither is what the user asked.
    """
    if "<system-reminder>" in text:
        text = _REMINDER.sub("", text)
    if OPEN in text:
        text = _OLD_BLOCK.sub("", text)
    return text.strip()


def extractive_summary(
    head: Sequence[Message], items: Sequence[ToolItem], *, cwd: str | None = None
) -> str:
    """The offline summary of ``head`` (its tool ``items`` give files changed and errors)."""
    replies = [t for t in (m.text().strip() for m in head if m.role == "assistant") if t]
    sections: list[str] = user_requests(head)
    if replies:
        sections.append(_section("Last assistant reply", replies[-1], LAST_REPLY_CHARS))
    changed = files_changed(items, cwd)
    if len(changed) > MAX_FILES:
        changed = [*changed[:MAX_FILES], f"and {len(changed) - MAX_FILES} more"]
    if changed:
        sections.append("Files changed: " + ", ".join(changed))
    errors = _errors(items)
    if errors:
        sections.append("Errors seen (latest last):\n" + "\n".join(errors))
    stuck = [f"{i.tool} {i.label}"[:ERROR_LINE_CHARS] for i in items if i.interrupted]
    if stuck:
        sections.append("Interrupted calls (no result): " + "; ".join(stuck))
    return "\n\n".join(sections)


def user_requests(head: Sequence[Message]) -> list[str]:
    """The user's first request and their latest one, verbatim (cut in the middle when
    long): the sections a summary must never lose."""
    users = [t for t in (conversational(m.text()) for m in head if m.role == "user") if t]
    sections: list[str] = []
    if users:
        sections.append(_section("Task (the user's first request)", users[0], FIRST_REQUEST_CHARS))
    if len(users) > 1:
        sections.append(_section("Latest user request", users[-1], LATEST_REQUEST_CHARS))
    return sections


def files_changed(items: Sequence[ToolItem], cwd: str | None) -> list[str]:
    """Each changed path once, in first-change order, with its tools: ``a.py (Edit x2)``."""
    counts: dict[str, dict[str, int]] = {}
    for item in items:
        if item.category == "change" and item.path is not None and not item.is_error:
            tools = counts.setdefault(item.path, {})
            tools[item.tool] = tools.get(item.tool, 0) + 1
    out = []
    for path, tools in counts.items():
        done = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in tools.items())
        out.append(f"{display_path(path, cwd)} ({done})")
    return out


def _errors(items: Sequence[ToolItem]) -> list[str]:
    failed = [i for i in items if i.is_error and i.result is not None]
    out = []
    for item in failed[-MAX_ERRORS:]:
        lines = (item.result or "")[: ERROR_LINE_CHARS * 4].splitlines()
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        out.append(f"- {item.tool} {item.label}: {first}"[:ERROR_LINE_CHARS])
    return out


def _section(title: str, text: str, cap: int) -> str:
    body, _ = cut_middle([text], cap)
    return f"{title}:\n{body}"


__all__ = ["conversational", "extractive_summary", "files_changed", "user_requests"]

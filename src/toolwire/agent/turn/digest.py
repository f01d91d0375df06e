"""What a client without ``subagents`` sees of a child: one line per tool call of it.

A child's updates are written by its own update engine to a ``DigestSink`` instead of the
wire. The sink keeps each call's title and status (ACP replace semantics: a field an
update leaves out keeps its value) and tells the parent when a line changed, which then
sets them as the content of its ``Task`` call: through the parent's engine, so they are
coalesced and throttled like any output, and cut to the same byte bound
(``limits.max_live_output_bytes``) however much the child prints, keeping the newest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.agent.features.agent_types import DEFAULT_TYPE
from toolwire.updates.titles import Description

_STATUS = {"pending": "…", "in_progress": "…", "completed": "✓", "failed": "✗"}
MAX_LINE = 160


class DigestSink:
    """A ``LineSink`` for a child's ``session/update`` lines: the digest of its calls."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self._changed = changed
        self._calls: dict[str, list[str]] = {}  # toolCallId -> [title, status]

    def write_line(self, line: bytes) -> None:
        update = _update(line)
        kind = update.get("sessionUpdate")
        if kind not in ("tool_call", "tool_call_update"):
            return
        call_id = str(update.get("toolCallId"))
        entry = self._calls.setdefault(call_id, [call_id, "pending"])
        before = list(entry)
        if isinstance(title := update.get("title"), str) and title:
            entry[0] = title
        if isinstance(status := update.get("status"), str):
            entry[1] = status
        if entry != before or kind == "tool_call":
            self._changed()

    async def drain(self) -> None:
        """Nothing to wait for: the lines are read as they are written."""

    def lines(self) -> list[str]:
        """One line per call: its status mark and title."""
        return [_line(title, status) for title, status in self._calls.values()]

    def text(self, limit: int) -> str:
        """The lines within ``limit`` UTF-8 bytes, the newest kept (a count for the rest)."""
        lines = self.lines()
        kept: list[str] = []
        size = 0
        for line in reversed(lines):
            size += len(line.encode()) + 1
            if size > limit - 40:  # room for the count line
                break
            kept.append(line)
        kept.reverse()
        if len(kept) < len(lines):
            kept.insert(0, f"({len(lines) - len(kept)} earlier calls)")
        return "\n".join(kept)


def describe_task(args: Mapping[str, Any], cwd: str) -> Description:
    """The ``Task`` card's title: the task's few words."""
    words = args.get("description")
    kind = args.get("subagent_type")
    title = f"Task: {words}" if isinstance(words, str) and words else "Task"
    if isinstance(kind, str) and kind and kind != DEFAULT_TYPE:
        title += f" ({kind})"
    return Description(title, "think", ())


def _update(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    params = message.get("params") if isinstance(message, dict) else None
    update = params.get("update") if isinstance(params, dict) else None
    return update if isinstance(update, dict) else {}


def _line(title: str, status: str) -> str:
    text = " ".join(title.split())
    if len(text) > MAX_LINE:
        text = text[: MAX_LINE - 1] + "…"
    return f"{_STATUS.get(status, '?')} {text}"


__all__ = ["DigestSink", "describe_task"]

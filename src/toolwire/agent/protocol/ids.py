"""Ids the editor sees: tool call ids unique in a session, message ids unique everywhere."""

from __future__ import annotations

import uuid
from dataclasses import replace

from toolwire.events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart


class IdGuard:
    """ACP ``toolCallId``s unique in the session, even when a provider repeats an id.

    A replayed cassette, or a text-format model numbering ``call_0`` in every response,
    would otherwise reuse an id the editor already shows (Zed upserts onto the old card).
    The history keeps the provider's ids; only the editor's ids are renamed. ``used`` is
    the session's set, seeded on reopen from every id it issued in any process (the store
    keeps them, ``SessionDatabase.call_ids``), so a restart or ``session/load`` never
    hands out one again.
    """

    def __init__(self, used: set[str]) -> None:
        self._used = used
        self._map: dict[str, str] = {}

    def issued(self) -> list[str]:
        """The ACP ids this response's calls were given."""
        return list(self._map.values())

    def acp_id(self, provider_id: str) -> str:
        """The ACP id of a call of this response."""
        return self._map.get(provider_id, provider_id)

    def event(self, event: Event) -> Event:
        """``event`` with its call id made unique in the session."""
        if isinstance(event, ToolCallStart):
            new, n = event.id, 1
            while new in self._used:
                n += 1
                new = f"{event.id}-{n}"
            self._used.add(new)
            self._map[event.id] = new
            return event if new == event.id else replace(event, id=new)
        if isinstance(event, ToolCallDelta | ToolCallEnd):
            new = self._map.get(event.id, event.id)
            return event if new == event.id else replace(event, id=new)
        return event


def new_message_id() -> str:
    """A ``messageId`` unique across turns and restarts (a reused one merges two messages)."""
    return uuid.uuid4().hex


__all__ = ["IdGuard", "new_message_id"]

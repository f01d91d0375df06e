"""``Conversation``: what the next model request of a session is built from.

The history since the last ``/clear`` (never rewritten), the current switch or
compaction point (the handoff the backend sees that history through) and the usage
meter. Every change of what the model sees is one of the verbs below; ``record`` and
``restore`` carry all of it across a restart, so a reopened session sends the same bytes
as one that never stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from toolwire.context import Compaction, ContextMeter, Window, restore
from toolwire.conversation.record import ConversationRecord, Point
from toolwire.errors import UsageError
from toolwire.handoff import Handoff
from toolwire.history import Message

log = logging.getLogger("toolwire.conversation")


class Conversation:
    """One session's conversation as the model sees it.

    ``history`` is the raw history since the last clear (``offset``: the stored messages
    before it); append to it as the session goes on. ``handoff`` is the live form of the
    current point (it also carries what a notice tells the user); ``meter`` measures it
    for the backend that answers (``meter_for``: the caller knows the window).
    """

    __slots__ = ("_point", "_saved", "handoff", "history", "meter", "offset")

    def __init__(self, history: Sequence[Message] = (), *, offset: int = 0) -> None:
        self.history: list[Message] = list(history)
        self.offset = offset
        self.handoff: Handoff | None = None
        self.meter: ContextMeter | None = None
        self._point: Point | None = None
        self._saved: ConversationRecord | None = None

    def request(self) -> list[Message]:
        """The messages a backend gets now: the history, through the handoff if any."""
        if self.handoff is None:
            return list(self.history)
        return self.handoff.apply(self.history)

    def switched(self, handoff: Handoff, target: str) -> None:
        """A switch to ``target``: from now on it sees the history through ``handoff``."""
        self._point = Point("switch", handoff.switch_at, handoff.tail_start, handoff.block, target)
        self.handoff = handoff

    def compacted(self, compaction: Compaction, target: str) -> None:
        """A compaction for ``target`` (also a switch that had to compact to fit)."""
        self._point = compaction.point(target)
        self.handoff = compaction.handoff

    def cleared(self) -> None:
        """``/clear``: the model's history starts empty; the earlier points go with it."""
        self.offset += len(self.history)
        self.history = []
        self._point, self.handoff = None, None
        if self.meter is not None:
            self.meter.used = 0

    def meter_for(self, owner: str, window: Window) -> ContextMeter:
        """The meter for backend ``owner`` (of ``window``): the current one while that
        backend answers, else a new one (a switch); the cost so far carries over."""
        current = self.meter
        if current is not None and current.owner == owner:
            return current
        fresh = ContextMeter(window, owner=owner)
        if current is not None:
            fresh.cost, fresh.currency = current.cost, current.currency
        self.meter = fresh
        return fresh

    def rewound(self, record: ConversationRecord, stored: Sequence[Message], target: str) -> None:
        """``/rewind`` (and its undo): the conversation is now that of ``record`` over
        ``stored``, as a restart would build it; the meter (its window, its cost so far)
        stays, measured again at the next request."""
        made = Conversation.restore(record, stored, target)
        self.history, self.offset = made.history, made.offset
        self.handoff, self._point, self._saved = made.handoff, made._point, made._saved
        if self.meter is not None:
            self.meter.used = 0

    def record(self) -> ConversationRecord:
        """What a store keeps to ``restore`` this conversation in another process."""
        gauge = self.meter
        if gauge is None:
            return ConversationRecord(self.offset, self._point)
        return ConversationRecord(self.offset, self._point, gauge.ratio, gauge.owner)

    def unsaved(self) -> ConversationRecord | None:
        """The record when it changed since the last ``unsaved`` (or ``restore``), else
        None: what a store that is written after every response needs to write."""
        record = self.record()
        if record == self._saved:
            return None
        self._saved = record
        return record

    @classmethod
    def restore(
        cls, record: ConversationRecord, stored: Sequence[Message], target: str | None = None
    ) -> Conversation:
        """The conversation of ``record`` over ``stored``, the session's whole stored
        history: the clear point indexes it, every other point what follows the clear.
        ``target``: the backend of a point stored without one (by an older version)."""
        cleared = record.cleared if 0 <= record.cleared <= len(stored) else 0
        made = cls(stored[cleared:], offset=cleared)
        made._saved = record
        point = record.point
        if point is not None:
            try:
                handoff = restore(made.history, point, target)
            except UsageError as exc:  # a history changed under it: send the raw one
                log.warning("stored %s point not used: %s", point.kind, exc)
            else:
                made._point, made.handoff = point, handoff
        return made


__all__ = ["Conversation"]

"""``Conversation``: what the next model request of a session is built from.

The history since the last ``/clear`` (never rewritten), the current switch or
compaction point (the handoff the backend sees that history through) and the usage
meter. Every change of what the model sees is one of the verbs below; ``record`` and
``restore`` carry all of it across a restart, so a reopened session sends the same bytes
as one that never stopped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

from toolwire.context import Compaction, ContextMeter, restore
from toolwire.conversation.record import ConversationRecord, Point
from toolwire.errors import UsageError
from toolwire.handoff import Handoff
from toolwire.history import Message

log = logging.getLogger("toolwire.conversation")


class Conversation:
    """One session's conversation as the model sees it.

    ``history`` is the raw history since the last clear (``offset``: the stored messages
    before it); append to it as the session goes on. ``handoff`` is the live form of the
    current point (it also carries what a notice tells the user); ``meter`` is set by the
    owner, which knows the backend's window.
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
        handoff = compaction.handoff
        cuts = tuple((c.message, c.part, c.cap) for c in compaction.cuts)
        at, start = handoff.switch_at, handoff.tail_start
        self._point = Point("compaction", at, start, handoff.block, target, cuts)
        self.handoff = handoff

    def cleared(self) -> None:
        """``/clear``: the model's history starts empty; the earlier points go with it."""
        self.offset += len(self.history)
        self.history = []
        self._point, self.handoff = None, None
        if self.meter is not None:
            self.meter.used = 0

    def forked(self) -> Conversation:
        """An independent copy (the history list and the point; no meter)."""
        copy = Conversation.restore(dataclasses.replace(self.record(), cleared=0), self.history)
        copy.offset = self.offset
        return copy

    def rewound(self, to: int) -> None:
        """Keep ``history[:to]``; a point after it no longer applies and is dropped."""
        if not 0 <= to <= len(self.history):
            raise UsageError(f"cannot rewind to {to} of {len(self.history)} messages")
        del self.history[to:]
        if self._point is not None and self._point.at > to:
            self._point, self.handoff = None, None

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
            fields = {"at": point.at, "tail_from": point.tail_from, "block": point.block}
            try:
                handoff = restore(
                    made.history, {**fields, "cuts": point.cuts}, point.target or target
                )
            except UsageError as exc:  # a history changed under it: send the raw one
                log.warning("stored %s point not used: %s", point.kind, exc)
            else:
                made._point, made.handoff = point, handoff
        return made


__all__ = ["Conversation"]

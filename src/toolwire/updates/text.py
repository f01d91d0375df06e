"""Message text chunks: one ``messageId`` per message.

ACP v1: "All chunks belonging to the same message share the same ``messageId``. A change
in ``messageId`` indicates a new message" (``ContentChunk``). Text is the one thing that
appends in v1, so a chunk sent twice is shown twice: chunks are never compared by
content (two equal adjacent deltas are ordinary text, a model writes ``=`` then ``=``),
and a provider event delivered twice is dropped by its decoder, which knows its identity
(e.g. the Responses decoder's replay check).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from toolwire.updates.metrics import Counters
from toolwire.updates.render import Envelope
from toolwire.updates.wire import Notification, encode

ChunkKind = Literal["agent_message_chunk", "agent_thought_chunk"]


class MessageText:
    """The chunks of one message stream (agent text or agent thoughts) of a session."""

    __slots__ = ("_counters", "_envelope", "_id_json", "_new_id", "kind", "message_id")

    def __init__(
        self,
        kind: ChunkKind,
        envelope: Envelope,
        new_id: Callable[[], str],
        counters: Counters,
    ) -> None:
        self.kind = kind
        self._envelope = envelope
        self._new_id = new_id
        self._counters = counters
        self.message_id: str | None = None
        self._id_json = ""

    def chunk(self, text: str) -> Notification | None:
        """A streamed delta; ``None`` if empty."""
        return self._send(text) if text else None

    def end(self) -> None:
        """The message is over: the next chunk starts a new message with a new id."""
        self.message_id = None

    def _send(self, text: str) -> Notification:
        if self.message_id is None:
            self.message_id = self._new_id()
            self._id_json = encode(self.message_id)
        update = {
            "sessionUpdate": self.kind,
            "content": {"type": "text", "text": text},
            "messageId": self.message_id,
        }
        body = ',"content":{"type":"text","text":' + encode(text) + '},"messageId":' + self._id_json
        note = self._envelope.wrap(update, body, self.kind, None)
        self._counters.sent(len(note.line), len(note.line))
        return note


__all__ = ["ChunkKind", "MessageText"]

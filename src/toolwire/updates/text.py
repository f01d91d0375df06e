"""Message text chunks: one ``messageId`` per message, and a duplicate guard done right.

ACP v1: "All chunks belonging to the same message share the same ``messageId``. A change
in ``messageId`` indicates a new message" (``ContentChunk``). Text is the one thing that
appends in v1, so a chunk sent twice is shown twice.

The guard of seed 001 compared each chunk with the previous one and was never reset
(``research/seeds.md`` B): it dropped the second of two equal adjacent deltas, which is
ordinary text (a model writes ``=`` then ``=``), and it let through the real duplicate,
a consolidated copy of the whole message after its deltas (claude-agent-acp#796, text
rendered twice). This guard suppresses only what was already delivered:

* ``chunk(text, key=...)``: a provider event delivered twice, recognised by its identity
  ``key`` (e.g. a Responses ``sequence_number``); chunks are never compared by content;
* ``consolidated(text)``: the full text of the message; only the part not yet streamed
  goes out (nothing, when the deltas already delivered all of it).

Both reset with the message (``end()``), so nothing leaks into the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Literal

from toolwire.updates.metrics import Counters
from toolwire.updates.render import Envelope
from toolwire.updates.wire import Notification, encode

ChunkKind = Literal["agent_message_chunk", "agent_thought_chunk"]


class MessageText:
    """The chunks of one message stream (agent text or agent thoughts) of a session."""

    __slots__ = (
        "_counters",
        "_delivered",
        "_envelope",
        "_id_json",
        "_keys",
        "_new_id",
        "diverged",
        "kind",
        "message_id",
    )

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
        self._delivered: list[str] = []
        self._keys: set[Hashable] = set()
        self.diverged = 0

    def chunk(self, text: str, key: Hashable | None = None) -> Notification | None:
        """A streamed delta; ``None`` if empty or if event ``key`` was already delivered."""
        if not text:
            return None
        if key is not None:
            if key in self._keys:
                return None
            self._keys.add(key)
        return self._send(text)

    def consolidated(self, text: str) -> Notification | None:
        """The message's full text: send only what the deltas have not delivered."""
        delivered = "".join(self._delivered)
        if text.startswith(delivered):
            return self._send(text[len(delivered) :]) if len(text) > len(delivered) else None
        if delivered.startswith(text):
            return None
        # Not a copy of what was streamed: v1 cannot retract text, and text is never
        # dropped, so it goes out whole; counted so the mismatch is visible.
        self.diverged += 1
        return self._send(text)

    def end(self) -> None:
        """The message is over: the next chunk starts a new message with a new id."""
        self.message_id = None
        self._delivered = []
        self._keys = set()

    def _send(self, text: str) -> Notification:
        if self.message_id is None:
            self.message_id = self._new_id()
            self._id_json = encode(self.message_id)
        self._delivered.append(text)
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

"""A proxy session: who it is (``session_id``) and what the proxy keeps about it.

Claude Code resends the whole history on every request, so the proxy keeps what the
history cannot say: the backend a session was switched to from outside, the latest
switch point (the number of messages when the backend changed) with its handoff, each
backend's compaction, and which backend produced each turn. The points are
``toolwire.conversation`` records, the agent's own format; a session stored by a
version before them (``switches``, ``summaries``, compactions as lists) is read once
and written in the new form. ``SessionState`` is all of it and its JSON form; where it
is kept is ``stores/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolwire.conversation import ConversationRecord, Point
from toolwire.proxy.errors import BadRequestError

IMPLICIT_SESSION = "default"
SESSION_HEADERS = ("x-claude-code-session-id", "x-toolwire-session")
_LEGACY = re.compile(r"_session_([0-9A-Za-z-]+)$")
# Provenance keys kept per session (a few per assistant turn): the oldest go first, and
# a turn older than that only loses its thinking, never its text or tool calls.
MAX_PRODUCED = 4096
# A session id is a store key and is echoed in the ``x-toolwire-session`` response header,
# which HTTP restricts to visible ASCII (RFC 9110, section 5.5): Claude Code's ids are UUIDs.
MAX_SESSION_ID = 256
_SESSION_ID = re.compile(rf"[\x20-\x7e]{{1,{MAX_SESSION_ID}}}")


def session_id(body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    """The session of a request: ``metadata.user_id``, else a header, else the implicit one.

    Current Claude Code sends ``user_id`` as a JSON string holding ``session_id``; older
    versions end it with ``_session_<uuid>``. ``BadRequestError`` for an id that is not
    ``check_session``'s.
    """
    return check_session(_found_session(body, headers))


def owned_session(sid: str, owner: str | None) -> str:
    """The store key of session ``sid`` of ``owner`` (a person, ``KeyRecord.owner``; None:
    the single token's or an open proxy's, keyed by the id alone, as before people).

    A tab cannot occur in a session id (``check_session``), so no id a client sends can
    name another person's entry, whatever it holds."""
    return sid if owner is None else f"{owner}\t{sid}"


def client_session(key: str) -> str:
    """The session id the client sent, of its store key (``owned_session``)."""
    return key.rpartition("\t")[2]


def check_session(sid: str) -> str:
    """``sid`` if it is a usable session id (1 to 256 visible ASCII characters or spaces),
    else ``BadRequestError``: it must encode as a store key and as a header value."""
    if _SESSION_ID.fullmatch(sid) is None:
        raise BadRequestError(
            f"invalid session id {sid[:40]!r}: 1 to {MAX_SESSION_ID} printable ASCII characters"
        )
    return sid


def _found_session(body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(user_id, str) and user_id:
        try:
            parsed = json.loads(user_id)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("session_id"), str):
            return str(parsed["session_id"])
        legacy = _LEGACY.search(user_id)
        if legacy:
            return legacy.group(1)
    for name in SESSION_HEADERS:
        if headers.get(name):
            return headers[name]
    return IMPLICIT_SESSION


@dataclass(slots=True)
class SessionState:
    """A session's routing state.

    ``forced``: the backend set by ``proxy switch``; ``conversation``: the latest switch
    as a ``toolwire.conversation`` record, its point at the length of the neutral history
    when it happened (its block is built by the first request to the new backend: until
    then its ``head`` is None; ``rewrite.py``);
    ``produced``: provenance key -> the backend that produced that assistant turn
    (``provenance.py``), oldest first; ``compactions``: backend -> the proxy's latest
    compaction for it, a record whose point's ``head`` is the digest of the compacted
    history's first message (``compaction.py``).
    """

    forced: str | None = None
    last_backend: str | None = None
    conversation: ConversationRecord = field(default_factory=ConversationRecord)
    produced: dict[str, str] = field(default_factory=dict)
    compactions: dict[str, ConversationRecord] = field(default_factory=dict)
    saved: dict[str, Any] = field(default_factory=dict)
    """What a dialect keeps under its own key (a stored Responses answer: ``dialects``)."""

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "forced": self.forced,
            "last": self.last_backend,
            "conversation": self.conversation.to_json(),
            "produced": self.produced,
        }
        if self.compactions:  # absent otherwise: the same JSON as before compactions
            data["compactions"] = {k: v.to_json() for k, v in self.compactions.items()}
        if self.saved:
            data["saved"] = self.saved
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> SessionState:
        data = json.loads(text)
        stored = data.get("conversation")
        conversation = (
            ConversationRecord.from_json(stored)
            if stored is not None
            else _legacy_switch(data.get("switches", []))
        )
        produced = {str(k): str(v) for k, v in data.get("produced", {}).items()}
        compactions = {
            str(k): _compaction(v, str(k)) for k, v in data.get("compactions", {}).items()
        }
        saved = data.get("saved")
        return cls(
            data.get("forced"),
            data.get("last"),
            conversation,
            produced,
            compactions,
            saved if isinstance(saved, dict) else {},
        )

    def remember(self, keys: list[str], backend: str) -> None:
        """Record that ``backend`` produced the turn with these provenance ``keys``."""
        for key in keys:
            self.produced.pop(key, None)  # re-inserted: it is the newest again
            self.produced[key] = backend
        while len(self.produced) > MAX_PRODUCED:
            del self.produced[next(iter(self.produced))]

    def record(self, backend: str, position: int) -> bool:
        """Note that a request whose history has ``position`` messages went to ``backend``.

        Returns True when that is a switch (a different backend than last time).
        """
        switched = self.last_backend is not None and self.last_backend != backend
        if switched:
            self.conversation = switch_point(position, backend)
        self.last_backend = backend
        return switched


def switch_point(at: int, backend: str) -> ConversationRecord:
    """A switch to ``backend`` at ``at`` whose handoff is not built yet (``head`` None)."""
    return ConversationRecord(point=Point("switch", at, at, "", backend))


def _compaction(data: Any, backend: str) -> ConversationRecord:
    """A stored compaction; one stored by a previous version (a list: the end, the digest
    of the first message, the compaction's fields) is read as the record it stands for."""
    if isinstance(data, Mapping):
        return ConversationRecord.from_json(data)
    _, first, old = data
    record = ConversationRecord.from_config({"compaction": old})
    if record.point is None:
        return record
    return replace(record, point=replace(record.point, target=backend, head=str(first)))


def _legacy_switch(switches: Any) -> ConversationRecord:
    """The latest of the ``switches`` a previous version kept ((at, backend) pairs; its
    summaries are rebuilt, the same bytes: the proxy's summary is extractive)."""
    if not switches:
        return ConversationRecord()
    at, backend = switches[-1]
    return switch_point(int(at), str(backend))


__all__ = [
    "IMPLICIT_SESSION",
    "MAX_PRODUCED",
    "SESSION_HEADERS",
    "SessionState",
    "check_session",
    "client_session",
    "owned_session",
    "session_id",
    "switch_point",
]

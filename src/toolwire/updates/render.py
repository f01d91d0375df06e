"""Building ``tool_call`` / ``tool_call_update`` notifications, validated before writing.

``CallRecord`` is what the client holds for one call: the state it was sent (after ACP's
replace semantics), whether the call has ended, and a cache of each field's JSON text by
value identity, so an unchanged large value is never encoded twice (the ``verbose`` and
``full`` profiles and the naive-size metric re-use it for free).

``UpdateBuilder`` collects the fields that changed and ``build()`` checks, before
anything is written, the rules peers broke (docs/design.md, "ACP rules that bite"):

* a ``tool_call`` precedes every update for its id (Zed shows an unknown id as
  "Tool call not found", google-gemini/gemini-cli#21783) and is sent once
  (agentclientprotocol/claude-agent-acp#122);
* status never goes backwards (pending < in_progress < completed | failed);
* nothing follows the end;
* ``rawInput``/``rawOutput`` are never cleared: v1 cannot express it.

A violation is a bug in toolwire and raises ``LifecycleError``; nothing is emitted.
The wire line is assembled from the cached field texts (compact, ASCII-only JSON, as
the official SDK's sender writes), so a notification is encoded exactly once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from toolwire.errors import LifecycleError
from toolwire.updates.metrics import Counters
from toolwire.updates.profiles import Profile
from toolwire.updates.wire import (
    FIELDS,
    STATUS_RANK,
    TERMINAL,
    WIRE_KEY,
    FieldName,
    Notification,
    ToolCallState,
    encode,
    encode_content,
    session_notification,
)

UpdateKind = Literal["tool_call", "tool_call_update"]
_ALWAYS_IN_FULL: frozenset[str] = frozenset({"title", "kind", "status", "content", "locations"})
_IN_TOOL_CALL: frozenset[str] = frozenset({"title", "kind", "status"})


def _has(state: ToolCallState, name: FieldName) -> bool:
    value = getattr(state, name)
    if name in ("content", "locations"):
        return bool(value)
    return value is not None


class Envelope:
    """The JSON-RPC wrapper of one session's ``session/update`` notifications."""

    __slots__ = ("_head", "_tail", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        # The text around an update is the encoding of the one envelope shape
        # (``wire.session_notification``) with an empty kind, cut where the kind goes.
        probe = encode(session_notification(session_id, {"sessionUpdate": ""}))
        cut = probe.rindex('""')
        self._head = probe[:cut]
        self._tail = probe[cut + 2 :] + "\n"

    def wrap(self, update: dict[str, Any], body: str, kind: str, call: str | None) -> Notification:
        """A notification from the update dict and its JSON text after ``sessionUpdate``."""
        line = (self._head + '"' + kind + '"' + body + self._tail).encode("ascii")
        return Notification(self.session_id, update, line, kind, call)

    def notify(self, update: Mapping[str, Any]) -> Notification:
        """A notification for an update built whole (a plan, a mode or config change)."""
        kind = str(update["sessionUpdate"])
        rest = {k: v for k, v in update.items() if k != "sessionUpdate"}
        body = "," + encode(rest)[1:-1] if rest else ""
        return self.wrap({"sessionUpdate": kind, **rest}, body, kind, None)

    def overhead(self, kind: str) -> int:
        """Bytes of a notification of ``kind`` besides its body."""
        return len(self._head) + len(kind) + 2 + len(self._tail)


class CallRecord:
    """What the client holds for one tool call, and the JSON text of each field."""

    __slots__ = ("_enc", "_naive", "counters", "ended", "id_json", "sent", "tool_call_id")

    def __init__(self, state: ToolCallState, counters: Counters) -> None:
        self.tool_call_id = state.tool_call_id
        self.id_json = encode(state.tool_call_id)
        self.sent = state
        self.ended = False
        self.counters = counters
        self._enc: dict[str, tuple[object, str]] = {}
        # Body size of an update carrying every field (naive metric), kept up to date
        # as fields are encoded: fields never vanish (v1 cannot clear them).
        self._naive = len(',"toolCallId":') + len(self.id_json)
        for name, _ in FIELDS:
            value = getattr(state, name)
            if value is not None:
                self.encoded(name, value)

    def encoded(self, name: FieldName, value: Any) -> str:
        """``value``'s JSON text, re-used while the field holds the same object."""
        cached = self._enc.get(name)
        if cached is not None and cached[0] is value:
            return cached[1]
        # The C encoder writes tuples as arrays.
        text = encode_content(value) if name == "content" else encode(value)
        self._enc[name] = (value, text)
        self._naive += len(text) - (len(cached[1]) if cached else -len(WIRE_KEY[name]) - 4)
        return text

    @property
    def naive_body(self) -> int:
        """Body bytes of an update carrying every field the call has (naive metric)."""
        return self._naive


def fields_for(
    kind: UpdateKind, profile: Profile, state: ToolCallState, changed: Iterable[FieldName]
) -> list[FieldName]:
    """Which fields a notification carries, in wire order, for this profile."""
    if profile == "full":
        return [n for n, _ in FIELDS if n in _ALWAYS_IN_FULL or getattr(state, n) is not None]
    if kind == "tool_call":  # empty lists are the client's default; raw values may be falsy
        return [n for n, _ in FIELDS if n in _IN_TOOL_CALL or _has(state, n)]
    wanted = set(changed)
    if profile == "verbose":
        wanted |= {"title", "kind"}
    return [n for n, _ in FIELDS if n in wanted]


class UpdateBuilder:
    """Collects changed fields of one call; ``build()`` validates, renders and commits."""

    __slots__ = ("_base", "_changes", "_envelope", "_profile", "_record")

    def __init__(self, record: CallRecord, envelope: Envelope, profile: Profile) -> None:
        self._record = record
        self._envelope = envelope
        self._profile = profile
        self._base = record.sent
        self._changes: dict[FieldName, Any] = {}

    def from_state(self, state: ToolCallState, names: Iterable[FieldName]) -> UpdateBuilder:
        """``names`` changed to their values in ``state``; every other field of ``state``
        must equal what the client holds (as ``diff.changed_fields`` guarantees)."""
        self._base = state
        for name in names:
            self._changes[name] = getattr(state, name)
        return self

    def build(self) -> Notification:
        """Validate against what the client holds, then render and commit the update."""
        record = self._record
        new = self._base
        _validate(record, new)
        names = fields_for("tool_call_update", self._profile, new, self._changes)
        note = render(self._envelope, record, "tool_call_update", new, names)
        record.sent = new
        record.ended = new.status in TERMINAL
        return note


def _validate(record: CallRecord, new: ToolCallState) -> None:
    call = record.tool_call_id
    if record.ended:
        raise LifecycleError(f"tool call {call}: update after its end ({record.sent.status})")
    old = record.sent
    if STATUS_RANK[new.status] < STATUS_RANK[old.status]:
        raise LifecycleError(f"tool call {call}: status {old.status} -> {new.status} goes back")
    for name in ("raw_input", "raw_output"):
        if getattr(new, name) is None and getattr(old, name) is not None:
            raise LifecycleError(f"tool call {call}: {WIRE_KEY[name]} cannot be cleared in v1")


def render(
    envelope: Envelope,
    record: CallRecord,
    kind: UpdateKind,
    state: ToolCallState,
    names: Iterable[FieldName],
) -> Notification:
    """The notification carrying ``names`` of ``state``; counts it in the metrics."""
    update: dict[str, Any] = {"sessionUpdate": kind, "toolCallId": record.tool_call_id}
    parts = [',"toolCallId":', record.id_json]
    for name in names:
        value = getattr(state, name)
        key = WIRE_KEY[name]
        parts += [',"', key, '":', record.encoded(name, value)]
        update[key] = list(value) if isinstance(value, tuple) else value
    note = envelope.wrap(update, "".join(parts), kind, record.tool_call_id)
    record.counters.sent(len(note.line), envelope.overhead(kind) + record.naive_body)
    return note


__all__ = ["CallRecord", "Envelope", "UpdateBuilder", "UpdateKind", "fields_for", "render"]

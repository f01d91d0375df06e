"""The terminal client's own view of a session, built from ``session/update`` notifications.

Theory of operation: ``SessionView.apply(session_id, update)`` is a reducer over updates in
wire form (the JSON object of ``params.update``, camelCase keys). It keeps what an editor
would display and returns one small change event for the renderer. ACP v1 semantics
(https://agentclientprotocol.com/protocol/tool-calls and the v1 schema):

* ``tool_call`` creates a call (status ``pending`` when omitted); a repeated id is an
  upsert, as Zed does.
* ``tool_call_update``: every field present *replaces* the stored one; ``content`` and
  ``locations`` are whole lists, never appended. An update for an unknown id still
  creates the call (so nothing is lost) and is recorded as a protocol warning.
* ``agent_message_chunk`` / ``agent_thought_chunk`` / ``user_message_chunk`` append; chunks
  sharing a ``messageId`` form one message, a new ``messageId`` starts a new one. Without
  ids, consecutive chunks of one kind are one message, until a tool call comes between.
* ``plan`` and ``config_option_update`` replace the whole set; the others set a value.

Byte accounting: every notification is measured as the compact ASCII JSON line the SDK
writes. The *naive* size of a tool-call notification is that line had the update carried
the whole current tool call (what a client needs when agents resend everything); other
notifications count the same in both.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from toolwire.updates.kinds import known_kind
from toolwire.updates.wire import encode, session_notification

JsonObject = dict[str, Any]
Role = Literal["agent", "thought", "user"]

ENDED = frozenset({"completed", "failed"})
_RANK = {"pending": 0, "in_progress": 1, "completed": 2, "failed": 2}
#: The session-level values the view keeps.
_Kept = Literal["plan", "current_mode_update", "config_option_update", "usage_update"]
_ROLES: dict[str, Role] = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user",
}


def line_size(session_id: str, update: JsonObject) -> int:
    """Bytes of the ``session/update`` line carrying ``update`` (compact JSON + newline)."""
    return len(encode(session_notification(session_id, update))) + 1


@dataclass(slots=True)
class ToolCallView:
    """One tool call as the client currently sees it (``fields`` in wire form)."""

    tool_call_id: str
    fields: JsonObject
    orphan: bool = False

    @property
    def title(self) -> str:
        """The title, or the id when the agent gave none."""
        return str(self.fields.get("title") or self.tool_call_id)

    @property
    def status(self) -> str:
        """``pending``, ``in_progress``, ``completed`` or ``failed``."""
        return str(self.fields.get("status") or "pending")

    @property
    def kind(self) -> str:
        """The ACP tool kind (``other`` when omitted)."""
        return str(self.fields.get("kind") or "other")

    @property
    def ended(self) -> bool:
        """Whether the call reached ``completed`` or ``failed``."""
        return self.status in ENDED

    def content(self, kind: str) -> list[JsonObject]:
        """The content items of one ``type`` (``diff``, ``content``, ``terminal``)."""
        items = self.fields.get("content") or []
        return [c for c in items if isinstance(c, dict) and c.get("type") == kind]

    def wire(self, kind: str = "tool_call") -> JsonObject:
        """The whole call as an update object of ``kind`` (``tool_call`` or its update)."""
        return {"sessionUpdate": kind, **self.fields}


@dataclass(slots=True)
class Message:
    """One streamed message (assistant text, thought or echoed user text)."""

    role: Role
    message_id: str | None
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Everything received so far."""
        return "".join(self.parts)


@dataclass(frozen=True, slots=True)
class ToolCallChanged:
    """A tool call was created or changed; which displayed facts moved."""

    call: ToolCallView
    created: bool
    title_changed: bool
    status_changed: bool
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class TextAppended:
    """Text was appended to ``message`` (``started``: it is a new message)."""

    message: Message
    text: str
    started: bool
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """Plan, mode, config options, usage or another session-level value arrived.

    ``same``: the value equals what the view already had (agents often resend it).
    """

    kind: str
    same: bool = False
    type: Literal["session"] = "session"


Change = ToolCallChanged | TextAppended | SessionChanged


@dataclass(slots=True)
class Traffic:
    """Notification counts and sizes, actual and naive."""

    notifications: int = 0
    bytes_received: int = 0
    naive_bytes: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)

    def count(self, kind: str, size: int, naive: int) -> None:
        """Count one notification."""
        self.notifications += 1
        self.bytes_received += size
        self.naive_bytes += naive
        self.by_kind[kind] += 1


@dataclass(slots=True)
class SessionView:
    """Everything a client displays for one session (see the module docstring)."""

    tool_calls: dict[str, ToolCallView] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    plan: list[JsonObject] = field(default_factory=list)
    mode: str | None = None
    config_options: list[JsonObject] = field(default_factory=list)
    usage: JsonObject | None = None
    traffic: Traffic = field(default_factory=Traffic)
    warnings: list[str] = field(default_factory=list)
    _tool_since_text: bool = field(default=False, init=False, repr=False)

    def apply(self, session_id: str, update: JsonObject) -> Change:
        """Apply one update (wire form) and count it; the change for the renderer."""
        kind = str(update.get("sessionUpdate"))
        size = line_size(session_id, update)
        known = known_kind(update)
        match known:
            case "tool_call" | "tool_call_update":
                change = self.merge_call(update, create=known == "tool_call")
                self.traffic.count(kind, size, line_size(session_id, change.call.wire(kind)))
                return change
            case "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk":
                self.traffic.count(kind, size, size)
                return self._append(_ROLES[known], update)
            case "plan" | "current_mode_update" | "config_option_update" | "usage_update":
                self.traffic.count(kind, size, size)
                return self._session_value(known, update)
            case (
                "available_commands_update"
                | "session_info_update"
                | "compaction_update"
                | "notice"
                | "subagent_update"
                | "state_update"
                | "user_message"
                | "terminal_update"
                | "terminal_output_chunk"
                | None
            ):
                # Counted and reported, not kept: nothing the view displays (None: a kind
                # of another agent's, or a future ACP's).
                self.traffic.count(kind, size, size)
                return SessionChanged(kind)
            case _:
                assert_never(known)

    def merge_call(self, update: JsonObject, *, create: bool) -> ToolCallChanged:
        """Replace the fields ``update`` carries (also used for permission requests)."""
        call_id = str(update.get("toolCallId"))
        self._tool_since_text = True
        fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
        call = self.tool_calls.get(call_id)
        if call is None:
            call = ToolCallView(call_id, {}, orphan=not create)
            self.tool_calls[call_id] = call
            if not create:
                self.warnings.append(f"update for unknown tool call {call_id} (no tool_call first)")
            before_title, before_status = None, None
        else:
            before_title, before_status = call.title, call.status
            if create:
                self.warnings.append(f"tool_call sent again for {call_id}")
            self._check_order(call, fields)
        call.fields.update(fields)
        return ToolCallChanged(
            call,
            created=before_status is None,
            title_changed=before_title is not None and call.title != before_title,
            status_changed=before_status is not None and call.status != before_status,
        )

    def _check_order(self, call: ToolCallView, fields: JsonObject) -> None:
        # Warnings for agent builders: clients drop or mis-show these (docs/design.md,
        # "Where the rules come from").
        if call.ended:
            self.warnings.append(f"update after the end of tool call {call.tool_call_id}")
        new = fields.get("status")
        if isinstance(new, str) and _RANK.get(new, 0) < _RANK.get(call.status, 0):
            self.warnings.append(
                f"status of {call.tool_call_id} went back from {call.status} to {new}"
            )

    def _append(self, role: Role, update: JsonObject) -> TextAppended:
        message_id = update.get("messageId")
        last = self.messages[-1] if self.messages else None
        started = last is None or last.role != role or last.message_id != message_id
        # Without ids, text after a tool call is a new message (what editors show).
        started = started or (message_id is None and self._tool_since_text)
        self._tool_since_text = False
        if started or last is None:
            last = Message(role, message_id if isinstance(message_id, str) else None)
            self.messages.append(last)
        text = block_text(update.get("content"))
        last.parts.append(text)
        return TextAppended(last, text, started)

    def _session_value(self, kind: _Kept, update: JsonObject) -> SessionChanged:
        before = (self.plan, self.mode, self.config_options, self.usage)
        match kind:
            case "plan":
                self.plan = [e for e in update.get("entries") or [] if isinstance(e, dict)]
            case "current_mode_update":
                self.mode = str(update.get("currentModeId"))
            case "config_option_update":
                options = update.get("configOptions") or []
                self.config_options = [o for o in options if isinstance(o, dict)]
            case "usage_update":
                self.usage = {k: v for k, v in update.items() if k != "sessionUpdate"}
            case _:
                assert_never(kind)
        return SessionChanged(
            kind, same=before == (self.plan, self.mode, self.config_options, self.usage)
        )

    def counts(self) -> Counter[str]:
        """How many tool calls are in each status."""
        return Counter(call.status for call in self.tool_calls.values())


def block_text(block: Any) -> str:
    """The text of a content block; a short placeholder for non-text blocks."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return f"[{block.get('name') or block.get('uri')}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        return f"[{resource.get('uri', 'resource')}]"
    return f"[{kind} {block.get('mimeType', '')}]".replace(" ]", "]")


__all__ = [
    "ENDED",
    "Change",
    "JsonObject",
    "Message",
    "SessionChanged",
    "SessionView",
    "TextAppended",
    "ToolCallChanged",
    "ToolCallView",
    "Traffic",
    "block_text",
    "line_size",
]

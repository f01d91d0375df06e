"""Builders for every ``session/update`` toolwire writes outside the engine's streaming path.

Modes, config options, commands, a session's title, usage, notices, compaction markers
and the stored transcript's updates (``toolwire.agent.store.transcript``): each shape is built
by one function here, as a typed dict, in the key order the wire has always had, so no
module builds one by hand. The streaming path (text deltas, tool-call updates) writes its
own lines in ``render`` for speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from toolwire.updates.wire import JsonObject

MessageKind: TypeAlias = Literal["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]
Severity: TypeAlias = Literal["info", "warning", "error"]


class MessageChunk(TypedDict):
    """A ``ContentChunk`` update: one block of a user, agent or thought message."""

    sessionUpdate: MessageKind
    content: JsonObject
    messageId: str


class PlanUpdate(TypedDict):
    """A ``Plan`` update: the whole plan (ACP replaces it)."""

    sessionUpdate: Literal["plan"]
    entries: list[Any]


class ToolCallFields(TypedDict):
    """A ``ToolCall``'s fields in wire form (an update carries those that changed)."""

    toolCallId: str
    title: NotRequired[str]
    kind: NotRequired[str]
    status: NotRequired[str]
    content: NotRequired[list[Any]]
    locations: NotRequired[list[Any]]
    rawInput: NotRequired[Any]
    rawOutput: NotRequired[Any]
    _meta: NotRequired[JsonObject]


class ToolCall(ToolCallFields):
    """A ``tool_call``: a call announced, in the state the client should show."""

    sessionUpdate: Literal["tool_call"]


class ToolCallUpdate(ToolCallFields):
    """A ``tool_call_update``: the fields of a call that changed (ACP replaces each)."""

    sessionUpdate: Literal["tool_call_update"]


class ModeUpdate(TypedDict):
    """A ``CurrentModeUpdate``."""

    sessionUpdate: Literal["current_mode_update"]
    currentModeId: str


class OptionsUpdate(TypedDict):
    """A ``ConfigOptionUpdate``: the session's whole set of options."""

    sessionUpdate: Literal["config_option_update"]
    configOptions: list[Any]


class CommandsUpdate(TypedDict):
    """An ``AvailableCommandsUpdate``."""

    sessionUpdate: Literal["available_commands_update"]
    availableCommands: list[Any]


class InfoUpdate(TypedDict):
    """A ``SessionInfoUpdate``: the title and when the session last changed."""

    sessionUpdate: Literal["session_info_update"]
    title: str | None
    updatedAt: str


class UsageUpdate(TypedDict):
    """A ``UsageUpdate``: tokens in the context window, its size, the cost so far."""

    sessionUpdate: Literal["usage_update"]
    used: int
    size: int
    cost: NotRequired[JsonObject]


class CompactionUpdate(TypedDict):
    """A compaction's progress (clients advertising ``session.compaction``)."""

    sessionUpdate: Literal["compaction_update"]
    compactionId: str
    status: str
    summary: NotRequired[list[Any]]
    error: NotRequired[str]


class SubagentState(TypedDict):
    """A child's foreground activity, as the parent mirrors it (``stopReason`` when idle)."""

    state: Literal["running", "idle"]
    stopReason: NotRequired[str]


class SubagentUpdate(TypedDict):
    """A ``subagent_update`` (unstable, clients advertising ``subagents``): the parent's
    session announces a child session, then mirrors its state."""

    sessionUpdate: Literal["subagent_update"]
    sessionId: str
    title: str | None
    description: NotRequired[str | None]
    state: SubagentState


class Notice(TypedDict):
    """A line for the user outside the conversation (clients advertising ``session.notices``)."""

    sessionUpdate: Literal["notice"]
    severity: Severity
    title: str
    description: NotRequired[str]


def message_chunk(kind: MessageKind, content: JsonObject, message_id: str) -> MessageChunk:
    """One block of a user's, the agent's or a thought's message."""
    return {"sessionUpdate": kind, "content": content, "messageId": message_id}


def text_chunk(kind: MessageKind, text: str, message_id: str) -> MessageChunk:
    """``message_chunk`` of one text block."""
    return message_chunk(kind, {"type": "text", "text": text}, message_id)


def plan_update(entries: Sequence[JsonObject]) -> PlanUpdate:
    """The whole plan (ACP replaces it), entries from ``plan_entry``."""
    return {"sessionUpdate": "plan", "entries": list(entries)}


def tool_call(call: JsonObject) -> ToolCall:
    """A ``tool_call`` announcing ``call`` (a ``ToolCall`` in wire form, keys in order)."""
    return cast(ToolCall, {"sessionUpdate": "tool_call", **call})


def tool_call_update(call_id: str, **fields: Any) -> ToolCallUpdate:
    """A ``tool_call_update`` of the fields given (camelCase), after ``toolCallId``."""
    update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}
    return cast(ToolCallUpdate, update)


def mode_update(mode_id: str) -> ModeUpdate:
    """The session's mode changed (``session/set_mode``, ``/mode``, plan mode's yes)."""
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}


def options_update(options: Sequence[JsonObject]) -> OptionsUpdate:
    """The session's whole set of config options (ACP replaces it)."""
    return {"sessionUpdate": "config_option_update", "configOptions": list(options)}


def commands_update(commands: Sequence[JsonObject]) -> CommandsUpdate:
    """The slash commands the session offers (``AvailableCommand`` objects)."""
    return {"sessionUpdate": "available_commands_update", "availableCommands": list(commands)}


def info_update(title: str | None, updated_at: str) -> InfoUpdate:
    """A session's title and ``updatedAt`` (ISO 8601)."""
    return {"sessionUpdate": "session_info_update", "title": title, "updatedAt": updated_at}


def usage_update(used: int, size: int, cost: JsonObject | None = None) -> UsageUpdate:
    """Tokens in the context window, its size, and the session's cost so far."""
    line: UsageUpdate = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not None:
        line["cost"] = cost
    return line


def compaction_update(
    compaction_id: str,
    status: str,
    *,
    summary: Sequence[JsonObject] | None = None,
    error: str | None = None,
) -> CompactionUpdate:
    """A compaction's progress, for a client that advertised ``session.compaction``."""
    line: CompactionUpdate = {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": status,
    }
    if summary is not None:
        line["summary"] = list(summary)
    if error is not None:
        line["error"] = error
    return line


def notice(title: str, severity: Severity = "warning", description: str | None = None) -> Notice:
    """A line for the user outside the conversation (clients advertising ``session.notices``)."""
    line: Notice = {"sessionUpdate": "notice", "severity": severity, "title": title}
    if description is not None:
        line["description"] = description
    return line


def subagent_update(
    session_id: str,
    title: str | None,
    state: SubagentState,
    *,
    description: str | None = None,
    described: bool = True,
) -> SubagentUpdate:
    """The parent's word on its child ``session_id``: its title, what it is for (left out
    when not ``described``: the client keeps what it had), and its state."""
    fields: dict[str, Any] = {"sessionId": session_id, "title": title}
    if described:
        fields["description"] = description
    return cast(SubagentUpdate, {"sessionUpdate": "subagent_update", **fields, "state": state})


__all__ = [
    "CommandsUpdate",
    "CompactionUpdate",
    "InfoUpdate",
    "MessageChunk",
    "MessageKind",
    "ModeUpdate",
    "Notice",
    "OptionsUpdate",
    "PlanUpdate",
    "Severity",
    "SubagentState",
    "SubagentUpdate",
    "ToolCall",
    "ToolCallFields",
    "ToolCallUpdate",
    "UsageUpdate",
    "commands_update",
    "compaction_update",
    "info_update",
    "message_chunk",
    "mode_update",
    "notice",
    "options_update",
    "plan_update",
    "subagent_update",
    "text_chunk",
    "tool_call",
    "tool_call_update",
    "usage_update",
]

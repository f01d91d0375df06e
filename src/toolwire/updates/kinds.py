"""The closed vocabulary of ``session/update``: every kind toolwire writes, one type each.

``SessionUpdate`` is the union of the typed dicts the builders return (``builders`` for
ACP v1's kinds and toolwire's unstable ``subagent_update``, ``builders_v2`` for the kinds
only v2 has); ``SessionUpdateKind`` names their ``sessionUpdate`` tags. A module that
dispatches on a kind (the v2 renderer, the terminal client's view, the transcript's
replay) matches on ``known_kind(update)`` and ends with ``assert_never``, so a kind added
here fails the type check until every one of them has decided what to do with it
(``tests/updates/test_kinds.py`` checks the union and the tags agree).

The engine's streaming path writes ``tool_call``, ``tool_call_update`` and the message
chunks as pre-encoded lines (``render``, ``text``): the same kinds, in the same shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, get_args

from toolwire.updates.builders import (
    CommandsUpdate,
    CompactionUpdate,
    InfoUpdate,
    MessageChunk,
    ModeUpdate,
    Notice,
    OptionsUpdate,
    PlanUpdate,
    SubagentUpdate,
    ToolCall,
    ToolCallUpdate,
    UsageUpdate,
)
from toolwire.updates.builders_v2 import (
    StateUpdate,
    TerminalOutputChunk,
    TerminalUpdate,
    UserMessage,
)

SessionUpdate: TypeAlias = (
    MessageChunk
    | ToolCall
    | ToolCallUpdate
    | PlanUpdate
    | ModeUpdate
    | OptionsUpdate
    | CommandsUpdate
    | InfoUpdate
    | UsageUpdate
    | CompactionUpdate
    | Notice
    | SubagentUpdate
    | StateUpdate
    | UserMessage
    | TerminalUpdate
    | TerminalOutputChunk
)

SessionUpdateKind: TypeAlias = Literal[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "current_mode_update",
    "config_option_update",
    "available_commands_update",
    "session_info_update",
    "usage_update",
    "compaction_update",
    "notice",
    "subagent_update",
    "state_update",
    "user_message",
    "terminal_update",
    "terminal_output_chunk",
]

_NAMED: Final[dict[str, SessionUpdateKind]] = {k: k for k in get_args(SessionUpdateKind)}
#: Every kind toolwire writes.
KINDS: Final[frozenset[str]] = frozenset(_NAMED)


def known_kind(update: Mapping[str, Any]) -> SessionUpdateKind | None:
    """``update``'s kind when it is one toolwire writes; None for any other (another
    agent's, a future ACP's, an extension's ``_`` kind)."""
    kind = update.get("sessionUpdate")
    return _NAMED.get(kind) if isinstance(kind, str) else None


__all__ = ["KINDS", "SessionUpdate", "SessionUpdateKind", "known_kind"]

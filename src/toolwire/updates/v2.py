"""The ACP v2 renderer: the engine's updates as the v2 draft's ``session/update``s.

One engine, two renderers. The engine decides *what* changed (the minimal patches, the
coalescing, the order); v1 is how it writes that by default. A v2 session passes each
update through ``V2Renderer.render``, which writes the same change in v2's words:

* ``tool_call`` and ``tool_call_update`` are both ``tool_call_update``: v2 upserts by id,
  so the first patch creates the card and the same minimal patches follow;
* content that only grew at its end (an item appended to the card) goes out as one
  ``tool_call_content_chunk`` per new item instead of the whole list again;
* a v1 diff (``path``, ``oldText``, ``newText``) becomes v2's ``changes`` with a git patch;
* ``plan`` becomes ``plan_update`` (one plan per session, the whole list each time);
* ``current_mode_update`` is dropped: the mode is a config option, and the agent sends
  the ``config_option_update`` that carries it beside every mode change;
* ``subagent_update`` is dropped: the v2 draft has no subagents (``DROPPED`` says why);
* message chunks keep their ``messageId`` (v2 requires it; one is made when missing).

The v2 kinds the agent writes itself (``terminal_update``, ``terminal_output_chunk``,
``state_update``, ``user_message``) are built by ``builders_v2`` (re-exported here) and
pass unchanged. ``render`` matches on the closed vocabulary (``updates.kinds``), so a new
kind fails the type check here until it is decided; a kind toolwire does not write is
never dropped unsaid (``NoV2FormError``). Pure: no I/O, no clock, stdlib only.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final, assert_never

from toolwire.updates.builders_v2 import (
    State,
    StateUpdate,
    TerminalExit,
    TerminalOutputChunk,
    TerminalUpdate,
    UserMessage,
    state_update,
    terminal_exited,
    terminal_output,
    terminal_started,
    user_message,
)
from toolwire.updates.kinds import SessionUpdateKind, known_kind

#: The ACP protocol version this module writes.
V2: Final = 2
#: The one plan of a session (v2 names plans; toolwire keeps one, the todo list).
PLAN_ID: Final = "plan"

#: The v2 kinds toolwire never writes, passed unchanged should one come this way.
_V2_ONLY: Final = frozenset(
    {
        "agent_message",
        "agent_thought",
        "tool_call_content_chunk",
        "plan_update",
        "compaction_summary_chunk",
    }
)

#: The kinds v2 is not sent, and why (every other kind is rendered: ``render``).
DROPPED: Final[Mapping[SessionUpdateKind, str]] = {
    "current_mode_update": (
        "v2 has no modes apart from config options: the agent sends the "
        "config_option_update carrying the mode beside every mode change"
    ),
    "subagent_update": (
        "the v2 draft has no subagents (its unstable superset makes child sessions every "
        "client's duty): a v2 client never has `subagents` on (handshake_v2), so it sees "
        "each child as the digest of its calls on the parent's Task card, and an "
        "announcement would name a session it is never told of"
    ),
}


class NoV2FormError(ValueError):
    """An update of a kind toolwire does not write and v2 does not define."""


def diff_v2(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 ``diff`` item (``path``, ``oldText``, ``newText``) as v2's changes and patch."""
    path = str(item["path"])
    old = item.get("oldText")
    new = str(item.get("newText", ""))
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        "/dev/null" if old is None else "a" + path,
        "b" + path,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    operation = "add" if old is None else "modify"
    return {
        "type": "diff",
        "changes": [{"operation": operation, "path": path}],
        "patch": {"format": "git_patch", "text": f"diff --git a{path} b{path}\n" + text},
    }


def content_v2(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call content items in v2 form (only diffs differ)."""
    return [diff_v2(i) if i.get("type") == "diff" else dict(i) for i in items]


def options_v2(options: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Config options in v2 form: ``id`` is ``configId``."""
    out = []
    for option in options:
        item = {("configId" if k == "id" else k): v for k, v in option.items()}
        out.append(item)
    return out


def commands_v2(commands: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Slash commands in v2 form: each tagged ``command``, its input tagged ``text``."""
    out = []
    for command in commands:
        item = {"type": "command", **command}
        hint = command.get("input")
        if isinstance(hint, Mapping):
            item["input"] = {"type": "text", **hint}
        out.append(item)
    return out


def _foreign(update: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A kind toolwire does not write: v2's own and an extension's (``_`` first, which v2
    reserves for them) pass unchanged; any other has no v2 form."""
    kind = update.get("sessionUpdate")
    if isinstance(kind, str) and (kind in _V2_ONLY or kind.startswith("_")):
        return [dict(update)]
    raise NoV2FormError(f"session/update kind {kind!r} has no ACP v2 form; it was not sent")


class V2Renderer:
    """One session's v1 updates as v2 updates; keeps what each card's content is."""

    __slots__ = ("_content", "_ids", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._content: dict[str, list[Any]] = {}
        self._ids = itertools.count(1)

    def render(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The v2 updates saying what ``update`` says (none, one, or several); a kind that
        has no v2 form raises ``NoV2FormError``: nothing is dropped unsaid."""
        kind = known_kind(update)
        match kind:
            case None:
                return _foreign(update)
            case "tool_call" | "tool_call_update":
                return self._tool_call(update)
            case "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk":
                out = dict(update)
                out.setdefault("messageId", f"{self.session_id}-r{next(self._ids)}")
                return [out]
            case "plan":
                entries = update.get("entries", [])
                plan = {"type": "items", "planId": PLAN_ID, "entries": entries}
                return [{"sessionUpdate": "plan_update", "plan": plan}]
            case "config_option_update":
                options = options_v2(update.get("configOptions", []))
                return [{"sessionUpdate": kind, "configOptions": options}]
            case "available_commands_update":
                commands = commands_v2(update.get("availableCommands", []))
                return [{"sessionUpdate": kind, "availableCommands": commands}]
            case "session_info_update" | "usage_update" | "notice" | "compaction_update":
                return [dict(update)]  # the same in v2
            case "state_update" | "user_message" | "terminal_update" | "terminal_output_chunk":
                return [dict(update)]  # v2's own
            case "current_mode_update" | "subagent_update":
                return []  # DROPPED says why
            case _:
                assert_never(kind)

    def _tool_call(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        call = str(update["toolCallId"])
        patch = {k: v for k, v in update.items() if k != "sessionUpdate"}
        out: list[dict[str, Any]] = []
        content = patch.pop("content", None)
        if content is not None:
            held = self._content.get(call, [])
            self._content[call] = list(content)
            if len(content) > len(held) and list(content[: len(held)]) == held:
                # Appended at the end: only the new items, each as a chunk.
                for item in content_v2(content[len(held) :]):
                    out.append(
                        {
                            "sessionUpdate": "tool_call_content_chunk",
                            "toolCallId": call,
                            "content": item,
                        }
                    )
            else:
                patch["content"] = content_v2(content)
        if len(patch) > 1 or not out:
            # The card's other fields (or the first sight of it) before its new content.
            out.insert(0, {"sessionUpdate": "tool_call_update", **patch})
        return out


__all__ = [
    "DROPPED",
    "PLAN_ID",
    "V2",
    "NoV2FormError",
    "State",
    "StateUpdate",
    "TerminalExit",
    "TerminalOutputChunk",
    "TerminalUpdate",
    "UserMessage",
    "V2Renderer",
    "commands_v2",
    "content_v2",
    "diff_v2",
    "options_v2",
    "state_update",
    "terminal_exited",
    "terminal_output",
    "terminal_started",
    "user_message",
]

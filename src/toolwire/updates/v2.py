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
* message chunks keep their ``messageId`` (v2 requires it; one is made when missing).

The v2 kinds the agent writes itself (``terminal_update``, ``terminal_output_chunk``,
``state_update``, ``user_message``) are built by the typed builders below and pass
unchanged. Pure: no I/O, no clock, stdlib only (``toolwire.updates`` rules).
"""

from __future__ import annotations

import base64
import difflib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NotRequired, TypedDict

#: The ACP protocol version this module writes.
V2: Final = 2
#: The one plan of a session (v2 names plans; toolwire keeps one, the todo list).
PLAN_ID: Final = "plan"

_PASS: Final = frozenset(
    {
        "user_message_chunk",
        "user_message",
        "agent_message",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
    }
)

State = Literal["running", "requires_action", "idle"]


class StateUpdate(TypedDict):
    """``state_update``: the session's foreground activity (``stopReason`` when idle)."""

    sessionUpdate: Literal["state_update"]
    state: State
    stopReason: NotRequired[str]


class UserMessage(TypedDict):
    """``user_message``: the prompt the agent accepted, under its id."""

    sessionUpdate: Literal["user_message"]
    messageId: str
    content: list[dict[str, Any]]


class TerminalExit(TypedDict, total=False):
    """How an agent-owned terminal's command ended."""

    exitCode: int | None
    signal: str | None


class TerminalUpdate(TypedDict):
    """``terminal_update``: an agent-owned terminal made, or its command ended."""

    sessionUpdate: Literal["terminal_update"]
    terminalId: str
    command: NotRequired[str]
    cwd: NotRequired[str]
    exitStatus: NotRequired[TerminalExit]


class TerminalOutputChunk(TypedDict):
    """``terminal_output_chunk``: bytes appended to a terminal's output (base64)."""

    sessionUpdate: Literal["terminal_output_chunk"]
    terminalId: str
    data: str


def state_update(state: State, stop_reason: str | None = None) -> StateUpdate:
    """The session is ``running``, waits on the user (``requires_action``), or is idle."""
    update: StateUpdate = {"sessionUpdate": "state_update", "state": state}
    if state == "idle":
        update["stopReason"] = stop_reason or "end_turn"
    return update


def user_message(message_id: str, content: Sequence[Mapping[str, Any]]) -> UserMessage:
    """The accepted prompt: its blocks as the client sent them, under ``message_id``."""
    return {
        "sessionUpdate": "user_message",
        "messageId": message_id,
        "content": [dict(block) for block in content],
    }


def terminal_started(terminal_id: str, command: str, cwd: str) -> TerminalUpdate:
    """An agent-owned terminal running ``command`` in ``cwd``."""
    return {
        "sessionUpdate": "terminal_update",
        "terminalId": terminal_id,
        "command": command,
        "cwd": cwd,
    }


def terminal_exited(
    terminal_id: str, exit_code: int | None, signal: str | None = None
) -> TerminalUpdate:
    """The terminal's command ended (``exit_code`` None: killed, by ``signal`` if known)."""
    status: TerminalExit = {"exitCode": exit_code}
    if signal is not None:
        status["signal"] = signal
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, "exitStatus": status}


def terminal_output(terminal_id: str, data: bytes) -> TerminalOutputChunk:
    """``data`` appended to the terminal's output; each byte is sent once."""
    return {
        "sessionUpdate": "terminal_output_chunk",
        "terminalId": terminal_id,
        "data": base64.b64encode(data).decode("ascii"),
    }


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


class V2Renderer:
    """One session's v1 updates as v2 updates; keeps what each card's content is."""

    __slots__ = ("_content", "_ids", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._content: dict[str, list[Any]] = {}
        self._ids = itertools.count(1)

    def render(self, update: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The v2 updates saying what ``update`` says (none, one, or several)."""
        kind = update.get("sessionUpdate")
        if kind in ("tool_call", "tool_call_update"):
            return self._tool_call(update)
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            out = dict(update)
            out.setdefault("messageId", f"{self.session_id}-r{next(self._ids)}")
            return [out]
        if kind == "plan":
            entries = update.get("entries", [])
            plan = {"type": "items", "planId": PLAN_ID, "entries": entries}
            return [{"sessionUpdate": "plan_update", "plan": plan}]
        if kind == "config_option_update":
            options = options_v2(update.get("configOptions", []))
            return [{"sessionUpdate": kind, "configOptions": options}]
        if kind == "available_commands_update":
            commands = commands_v2(update.get("availableCommands", []))
            return [{"sessionUpdate": kind, "availableCommands": commands}]
        if kind in _PASS:
            return [dict(update)]
        return []  # current_mode_update (a config option in v2), and any v1-only kind

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
    "PLAN_ID",
    "V2",
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

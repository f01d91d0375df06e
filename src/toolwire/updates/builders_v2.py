"""Builders of the ``session/update`` kinds only ACP v2 has, which the agent writes itself.

``state_update`` and ``user_message`` (the v2 wire's prompt progress,
``toolwire.agent.protocol.v2``) and an agent-owned terminal's ``terminal_update`` and
``terminal_output_chunk`` (``toolwire.agent.turn.agent_terminal``): typed dicts, like
``builders``, so each is one member of the closed vocabulary (``updates.kinds``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

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


__all__ = [
    "State",
    "StateUpdate",
    "TerminalExit",
    "TerminalOutputChunk",
    "TerminalUpdate",
    "UserMessage",
    "state_update",
    "terminal_exited",
    "terminal_output",
    "terminal_started",
    "user_message",
]

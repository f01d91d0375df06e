"""Transcripts from elsewhere as a toolwire history, the format told by its shape.

Accepted: an Anthropic Messages request body (``{"messages": [...], "system": ...}``) or
its message list; an OpenAI Chat Completions message list (or a body holding one);
toolwire's own history JSON (``history_json``: messages with ``parts``), as one JSON
array or one message per line. ``detect_format`` looks for what only one format has:
``parts`` for toolwire; ``tool_use``/``tool_result``/``thinking`` blocks for Anthropic;
``tool_calls``, ``tool_call_id`` or the roles ``tool``/``developer`` for OpenAI (not
``system``: Claude Code sends those too). A plain text chat fits both and reads the
same either way.

Mapping: Anthropic messages as ``backends.anthropic_import`` reads them (the proxy
reads every request with it too); OpenAI ``tool`` messages after one assistant message
merge into one ``tool`` message. Results take the name of the call they answer. System
prompts are left out: the new backend has its own. OpenAI images become a short
placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from toolwire.backends.anthropic_import import (
    TranscriptError,
    block_text,
    content_blocks,
    import_anthropic,
)
from toolwire.history import Message, Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from toolwire.history.jsonform import message_from_dict
from toolwire.history.pairing import UNKNOWN_TOOL

TranscriptFormat: TypeAlias = Literal["toolwire", "anthropic", "openai-chat"]
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "document"}
)
_OPENAI_ROLES = frozenset({"tool", "developer"})
_OPENAI_KEYS = ("tool_calls", "tool_call_id", "reasoning_content")


@dataclass(frozen=True, slots=True)
class Transcript:
    """An imported transcript: the format it was read as, and the history."""

    format: TranscriptFormat
    messages: tuple[Message, ...]


def load_transcript(text: str, *, backend: str | None = None) -> Transcript:
    """Parse JSON (or JSON lines) text and import it; ``backend`` names who answered."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as first:
        data = _json_lines(text, first)
    return import_transcript(data, backend=backend)


def _json_lines(text: str, first: json.JSONDecodeError) -> list[Any]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        raise TranscriptError(f"not JSON: {first.msg} at line {first.lineno}") from first
    rows = []
    for number, line in enumerate(lines, 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise TranscriptError(f"not JSON (nor JSON lines): line {number}: {e.msg}") from e
    return rows


def import_transcript(data: Any, *, backend: str | None = None) -> Transcript:
    """A parsed transcript (a body or a message list) as a history, format detected."""
    fmt = detect_format(data)
    raw = _message_list(data)
    if fmt == "toolwire":
        return Transcript(fmt, tuple(message_from_dict(m) for m in raw))
    if fmt == "anthropic":
        return Transcript(fmt, tuple(import_anthropic(raw, backend=backend)))
    return Transcript(fmt, tuple(import_openai_chat(raw, backend=backend)))


def detect_format(data: Any) -> TranscriptFormat:
    """Which format ``data`` is in; ``TranscriptError`` when it is none of them."""
    messages = _message_list(data)
    if any("parts" in m for m in messages):
        return "toolwire"
    anthropic = isinstance(data, Mapping) and "system" in data
    openai = False
    for message in messages:
        if message.get("role") in _OPENAI_ROLES or any(k in message for k in _OPENAI_KEYS):
            openai = True
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in _ANTHROPIC_BLOCKS for b in content
        ):
            anthropic = True
    if anthropic and openai:
        raise TranscriptError("the transcript mixes Anthropic and OpenAI message shapes")
    return "openai-chat" if openai else "anthropic"


def _message_list(data: Any) -> list[Mapping[str, Any]]:
    if isinstance(data, Mapping):
        if not isinstance(data.get("messages"), list):
            raise TranscriptError(
                "unknown transcript shape: expected a message list or a body with 'messages'"
            )
        data = data["messages"]
    if not isinstance(data, list):
        raise TranscriptError("unknown transcript shape: expected a JSON array or object")
    for number, message in enumerate(data, 1):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise TranscriptError(f"unknown transcript shape: message {number} has no role")
    return data


def import_openai_chat(
    messages: list[Mapping[str, Any]], *, backend: str | None = None
) -> list[Message]:
    """An OpenAI Chat Completions message list as a history."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for number, message in enumerate(messages, 1):
        role = message["role"]
        if role in ("system", "developer"):
            continue
        if role == "user":
            text = _openai_text(message.get("content"), number)
            out.append(Message("user", (TextPart(text),)))
        elif role == "assistant":
            parts = _openai_assistant(message, number, names)
            if parts:
                out.append(Message("assistant", tuple(parts), backend))
        elif role == "tool":
            _append_result(out, _openai_result(message, number, names))
        else:
            raise TranscriptError(f"message {number}: unknown OpenAI role {role!r}")
    return out


def _openai_text(content: Any, number: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(block_text(b) for b in content_blocks(content, number))


def _openai_assistant(message: Mapping[str, Any], number: int, names: dict[str, str]) -> list[Part]:
    parts: list[Part] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(ThinkingPart(reasoning))  # unsigned: never sent to another backend
    text = _openai_text(message.get("content"), number) or str(message.get("refusal") or "")
    if text:
        parts.append(TextPart(text))
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise TranscriptError(f"message {number}: tool_calls must be a list")
    for call in calls:
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
            raise TranscriptError(f"message {number}: a tool call without a function")
        function = call["function"]
        call_id, name = str(call.get("id", "")), str(function.get("name", ""))
        names[call_id] = name
        parts.append(ToolCallPart(call_id, name, _arguments(function.get("arguments"))))
    return parts


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw if raw is not None else {}
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw  # kept as text: backends send it back as invalid input


def _openai_result(
    message: Mapping[str, Any], number: int, names: Mapping[str, str]
) -> ToolResultPart:
    call_id = str(message.get("tool_call_id", ""))
    name = str(message.get("name") or names.get(call_id, UNKNOWN_TOOL))
    return ToolResultPart(call_id, name, _openai_text(message.get("content"), number))


def _append_result(out: list[Message], result: ToolResultPart) -> None:
    if out and out[-1].role == "tool":
        out[-1] = Message("tool", (*out[-1].parts, result))
    else:
        out.append(Message("tool", (result,)))


__all__ = [
    "Transcript",
    "TranscriptError",
    "TranscriptFormat",
    "detect_format",
    "import_anthropic",
    "import_openai_chat",
    "import_transcript",
    "load_transcript",
]

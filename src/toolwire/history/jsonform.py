"""The conversation history as JSON, losslessly: for the session store and for files.

Each part becomes an object tagged with ``type`` (``text``, ``image``, ``thinking``,
``tool_call``, ``tool_result``; a result's ``images`` only when it has some, so older
stored sessions read the same); a message is ``{"role", "parts", "backend"?}``. Fields that are None
are left out and come back as None, so ``message_from_dict(message_to_dict(m)) == m``
for every message whose tool arguments are JSON values. ``dumps`` escapes non-ASCII
characters, so even a lone surrogate a model produced survives storage as UTF-8.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.errors import UsageError
from toolwire.history import (
    ImagePart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)

_ROLES = ("user", "assistant", "tool")


def part_to_dict(part: Part) -> dict[str, Any]:
    """One part as a ``type``-tagged JSON object."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return _without_none(
            {"type": "image", "media_type": part.media_type, "data": part.data or None,
             "url": part.url}
        )  # fmt: skip
    if isinstance(part, ThinkingPart):
        return _without_none(
            {"type": "thinking", "text": part.text, "signature": part.signature,
             "redacted": part.redacted}
        )  # fmt: skip
    if isinstance(part, ToolCallPart):
        return _without_none(
            {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments,
             "signature": part.signature},
            keep=("arguments",),
        )  # fmt: skip
    if isinstance(part, ToolResultPart):
        out: dict[str, Any] = {
            "type": "tool_result",
            "call_id": part.call_id,
            "name": part.name,
            "content": part.content,
            "is_error": part.is_error,
        }
        if part.images:
            out["images"] = [part_to_dict(i) for i in part.images]
        return out
    raise UsageError(f"not a history part: {part!r}")


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """The part a ``part_to_dict`` object describes."""
    kind = data.get("type")
    if kind == "text":
        return TextPart(data["text"])
    if kind == "image":
        return ImagePart(str(data.get("media_type", "")), data.get("data", ""), data.get("url"))
    if kind == "thinking":
        return ThinkingPart(data["text"], data.get("signature"), data.get("redacted"))
    if kind == "tool_call":
        return ToolCallPart(data["id"], data["name"], data.get("arguments"), data.get("signature"))
    if kind == "tool_result":
        images = tuple(_image(i) for i in data.get("images", ()))
        return ToolResultPart(
            data["call_id"], data["name"], data["content"], bool(data.get("is_error", False)),
            images,
        )  # fmt: skip
    raise UsageError(f"unknown history part type {kind!r}")


def _image(data: Mapping[str, Any]) -> ImagePart:
    part = part_from_dict(data)
    if not isinstance(part, ImagePart):
        raise UsageError(f"a tool result's images must be images, not {data.get('type')!r}")
    return part


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as a JSON object; ``backend`` only when set."""
    out: dict[str, Any] = {"role": message.role, "parts": [part_to_dict(p) for p in message.parts]}
    if message.backend is not None:
        out["backend"] = message.backend
    return out


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """The message a ``message_to_dict`` object describes."""
    role = data.get("role")
    if role not in _ROLES:
        raise UsageError(f"unknown message role {role!r}")
    parts = tuple(part_from_dict(p) for p in data.get("parts", ()))
    return Message(role, parts, data.get("backend"))


def dumps(value: Any) -> str:
    """Compact, ASCII-only JSON (lone surrogates stay escaped; NaN is refused)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _without_none(data: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None or k in keep}


__all__ = [
    "dumps",
    "message_from_dict",
    "message_to_dict",
    "part_from_dict",
    "part_to_dict",
]

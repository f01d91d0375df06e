"""An Anthropic Messages list as a history: the way back from ``anthropic.build_body``.

The proxy reads every client request with it, and ``toolwire handoff`` reads Anthropic
transcripts with it (``handoff.importers``). User messages split into a ``tool`` message
(their ``tool_result`` blocks, which must come first) and a ``user`` message (the rest);
results take the name of the call they answer (``UNKNOWN_TOOL`` when it is not in the
list); system messages are left out. Images (base64 or URL sources) become image parts,
in user messages and in tool results; documents, server tool results and other blocks
become a short placeholder (``[document]``) or nothing.
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
from toolwire.history.pairing import UNKNOWN_TOOL


class TranscriptError(UsageError):
    """The input is not a transcript toolwire can read (the message says what is wrong)."""


def import_anthropic(
    messages: list[Mapping[str, Any]], *, backend: str | None = None
) -> list[Message]:
    """An Anthropic Messages list as a history."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for number, message in enumerate(messages, 1):
        role, blocks = message["role"], content_blocks(message.get("content"), number)
        if role == "assistant":
            parts = [p for p in (_anthropic_part(b, names) for b in blocks) if p is not None]
            if parts:
                out.append(Message("assistant", tuple(parts), backend))
        elif role == "user":
            results = [
                _anthropic_result(b, names, number)
                for b in blocks
                if b.get("type") == "tool_result"
            ]
            rest = [_user_part(b) for b in blocks if b.get("type") != "tool_result"]
            if results:
                out.append(Message("tool", tuple(results)))
            kept = tuple(p for p in rest if not isinstance(p, TextPart) or p.text)
            if kept:
                out.append(Message("user", kept))
        elif role != "system":
            raise TranscriptError(f"message {number}: unknown Anthropic role {role!r}")
    return out


def content_blocks(content: Any, number: int) -> list[Mapping[str, Any]]:
    """Message ``number``'s content as a block list (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    if not isinstance(content, list):
        raise TranscriptError(f"message {number}: content must be a string or a list")
    return [b if isinstance(b, Mapping) else {"type": "text", "text": str(b)} for b in content]


def _anthropic_part(block: Mapping[str, Any], names: dict[str, str]) -> Part | None:
    kind = block.get("type")
    if kind == "text":
        return TextPart(str(block.get("text", "")))
    if kind == "thinking":
        return ThinkingPart(str(block.get("thinking", "")), block.get("signature") or None)
    if kind == "redacted_thinking":
        return ThinkingPart("", redacted=str(block.get("data", "")))
    if kind == "tool_use":
        call_id, name = str(block.get("id", "")), str(block.get("name", ""))
        names[call_id] = name
        return ToolCallPart(call_id, name, block.get("input", {}))
    if kind == "server_tool_use":  # run by the provider, answered in this same message
        return TextPart(f"[server tool {block.get('name')}: {json.dumps(block.get('input'))}]")
    return None  # server tool results and unknown blocks: nothing another backend can use


def _anthropic_result(
    block: Mapping[str, Any], names: Mapping[str, str], number: int
) -> ToolResultPart:
    call_id = str(block.get("tool_use_id", ""))
    content = block.get("content", "")
    images: list[ImagePart] = []
    if isinstance(content, str):
        text = content
    else:
        blocks = content_blocks(content, number)
        images = [i for i in (_image(b) for b in blocks) if i is not None]
        text = "\n".join(block_text(b) for b in blocks if _image(b) is None)
    return ToolResultPart(
        call_id, names.get(call_id, UNKNOWN_TOOL), text, bool(block.get("is_error")), tuple(images)
    )


def _user_part(block: Mapping[str, Any]) -> TextPart | ImagePart:
    image = _image(block)
    return image if image is not None else TextPart(block_text(block))


def _image(block: Mapping[str, Any]) -> ImagePart | None:
    """An Anthropic ``image`` block's picture (None: not an image, or a source kind
    toolwire does not carry, such as a Files API id)."""
    source = block.get("source")
    if block.get("type") != "image" or not isinstance(source, Mapping):
        return None
    media_type = str(source.get("media_type", ""))
    if source.get("type") == "base64" and isinstance(source.get("data"), str):
        return ImagePart(media_type, source["data"])
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        return ImagePart(media_type, url=source["url"])
    return None


def block_text(block: Mapping[str, Any]) -> str:
    """A content block as text: its text, else its type as a placeholder (``[document]``)."""
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text"):
        return str(block.get("text", ""))
    if kind == "refusal":
        return str(block.get("refusal", ""))
    return f"[{kind}]" if kind else ""


__all__ = ["TranscriptError", "block_text", "content_blocks", "import_anthropic"]

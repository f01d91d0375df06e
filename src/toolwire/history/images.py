"""Images in a history: recognised by their bytes, or turned into one line of text.

Checking and fitting an image (decoding it, scaling it to the providers' limits) needs
Pillow, so it lives in ``toolwire.imaging``; this module stays standard-library only.

A backend that takes no images (``vision = false``, or tools as text markup) gets
``without_images``: each image becomes its note (``[image: image/png, 12 KB, not sent:
...]``), so the model knows one was there and the bytes are never sent.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterable

from toolwire.history import ImagePart, Message, Part, TextPart, ToolResultPart

NOT_SENT = "not sent: this model takes no images"


def sniff(data: bytes) -> str | None:
    """The image type of ``data`` by its magic bytes (png, jpeg, gif, webp), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_of(data: bytes, media_type: str) -> ImagePart:
    """An image part holding ``data`` (base64-encoded)."""
    return ImagePart(media_type, base64.b64encode(data).decode("ascii"))


def has_images(messages: Iterable[Message]) -> bool:
    """Whether any message carries an image (the user's, or a tool result's)."""
    return any(
        isinstance(p, ImagePart) or (isinstance(p, ToolResultPart) and p.images)
        for m in messages
        for p in m.parts
    )


def without_images(messages: Iterable[Message], reason: str = NOT_SENT) -> list[Message]:
    """The history with every image replaced by its one-line note."""
    return [Message(m.role, _textual(m.parts, reason), m.backend) for m in messages]


def _textual(parts: tuple[Part, ...], reason: str) -> tuple[Part, ...]:
    out: list[Part] = []
    for part in parts:
        before = out[-1] if out else None
        # Some wires join a message's text parts with nothing: keep the note on its own line.
        apart = isinstance(before, TextPart) and before.text and not before.text.endswith("\n")
        out.append(_textual_part(part, reason, "\n" if apart else ""))
    return tuple(out)


def _textual_part(part: Part, reason: str, prefix: str) -> Part:
    if isinstance(part, ImagePart):
        return TextPart(prefix + part.note(reason))
    if isinstance(part, ToolResultPart) and part.images:
        return dataclasses.replace(
            part, content=with_notes(part.content, part.images, reason), images=()
        )
    return part


def with_notes(text: str, images: Iterable[ImagePart], reason: str = "") -> str:
    """``text`` followed by one note line per image."""
    notes = [i.note(reason) for i in images]
    return "\n".join([text, *notes] if text else notes)


__all__ = [
    "NOT_SENT",
    "has_images",
    "image_of",
    "sniff",
    "with_notes",
    "without_images",
]

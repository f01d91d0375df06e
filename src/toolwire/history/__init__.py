"""The conversation history, provider-neutral: what backends translate and handoffs read.

A history is a list of ``Message``. Each message has a role and parts:

* ``user``: ``TextPart`` (the user's prompt; also the handoff block after a switch) and
  ``ImagePart`` (an image the user attached);
* ``assistant``: ``TextPart``, ``ThinkingPart``, ``ToolCallPart``, in the order the
  model produced them, with ``backend`` naming the backend that produced the message;
* ``tool``: ``ToolResultPart``, one per call of the preceding assistant message, in call
  order (backends reorder or regroup as their wire format requires). A result may carry
  images (``Read`` of a PNG), sent where the wire takes images in tool results.

Thinking parts and call signatures are bound to the backend that made them: a backend
translating a history must drop the thinking of every other backend and must never
invent a signature (docs/design.md, "Provider rules a translation must keep" and
"Backend switch: the handoff").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image: base64 ``data`` of type ``media_type``, or a ``url`` the provider fetches."""

    media_type: str
    data: str = ""
    url: str | None = None

    def size(self) -> int:
        """The decoded size in bytes (0 for a URL)."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    def note(self, reason: str = "") -> str:
        """The image as one line of text: ``[image: image/png, 12 KB]`` (+ ``, reason``)."""
        if self.url is not None:
            what = f"{self.media_type or 'image'} at {self.url}"
        else:
            what = f"{self.media_type}, {_kilobytes(self.size())}"
        return f"[image: {what}{', ' + reason if reason else ''}]"


def _kilobytes(size: int) -> str:
    return f"{size} B" if size < 1024 else f"{round(size / 1024)} KB"


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Reasoning, with the provider's signature or redacted payload when it had one."""

    text: str
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A call the model made. ``arguments`` is the parsed object (``{}`` when it had none).

    ``signature`` is an opaque provider token bound to the call (Gemini's
    ``thoughtSignature``), echoed back only to the backend that made it.
    """

    id: str
    name: str
    arguments: Any
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """What a call returned: text for the model, whether it is an error, and any images."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()


Part: TypeAlias = TextPart | ImagePart | ThinkingPart | ToolCallPart | ToolResultPart


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    parts: tuple[Part, ...]
    backend: str | None = None
    """For assistant messages: the name of the backend that produced it."""

    def text(self) -> str:
        """The message's visible text (text parts joined)."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: its name, what it does, and a JSON schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def tool_results(parts: Iterable[ToolResultPart]) -> Message:
    return Message("tool", tuple(parts))


__all__ = [
    "ImagePart",
    "Message",
    "Part",
    "Role",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "ToolResultPart",
    "ToolSpec",
    "tool_results",
    "user",
]

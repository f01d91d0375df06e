"""The conversation history, provider-neutral: what backends translate and handoffs read.

A history is a list of ``Message``. Each message has a role and parts:

* ``user``: ``TextPart`` (the user's prompt; also the handoff block after a switch);
* ``assistant``: ``TextPart``, ``ThinkingPart``, ``ToolCallPart``, in the order the
  model produced them, with ``backend`` naming the backend that produced the message;
* ``tool``: ``ToolResultPart``, one per call of the preceding assistant message, in call
  order (backends reorder or regroup as their wire format requires).

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
    """What a call returned: text for the model, and whether it is an error."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


Part: TypeAlias = TextPart | ThinkingPart | ToolCallPart | ToolResultPart


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

"""Normalized stream events: the contract between decoders and everything else.

Every provider decoder turns its wire format into this small vocabulary. Invariants
(docs/design.md, "Normalized events"):

* per tool call: exactly one ``ToolCallStart``, zero or more ``ToolCallDelta``, exactly
  one ``ToolCallEnd`` (also when the stream is cut: the end then carries an error);
* every decoded stream ends with exactly one ``MessageEnd``;
* the concatenation of ``TextDelta.text`` is the visible text, tool markup removed;
* the same bytes in any chunking give the same events.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, TypeAlias

StopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "refusal", "stop_sequence", "error"
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (``None`` when not reported)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Visible assistant text."""

    text: str
    type: ClassVar[Literal["text_delta"]] = "text_delta"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """Reasoning text; ``signature`` is the provider's signature when it arrives.

    ``redacted`` carries an opaque redacted-thinking payload (Anthropic
    ``redacted_thinking``); it may only ever be sent back to the backend that made it.
    """

    text: str
    signature: str | None = None
    redacted: str | None = None
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The tool's name is complete. ``index``: 0-based position among this response's calls.

    ``signature`` is an opaque provider token bound to the call (Gemini
    ``thoughtSignature``) that must be echoed back to the same provider.

    ``server`` marks a call the provider runs itself (Anthropic ``server_tool_use``, an
    OpenAI Responses ``web_search_call``): it is shown, never executed by the agent, and
    its ``ToolCallEnd`` carries the provider's ``result``.
    """

    id: str
    name: str
    index: int
    signature: str | None = None
    server: bool = False
    type: ClassVar[Literal["tool_call_start"]] = "tool_call_start"


@dataclass(slots=True)
class ToolCallDelta:
    """A raw argument fragment; ``fields``: top-level keys whose values just completed.

    ``values`` holds those fields' final values, in the same order, so a consumer can
    title the call ("Read src/app.py") without parsing the arguments again, whatever the
    wire format (for the markup formats ``text`` is not JSON). It is an in-process
    convenience: the JSON form leaves it out, the values are already in ``text``.

    Treat it as immutable like every event; it is the one not frozen, because one is
    made per provider delta and a frozen dataclass's ``__init__`` (a generic
    ``__setattr__`` per field) makes bench/decode_args.py row (a), 4 MB, 25% slower.
    """

    id: str
    text: str
    fields: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()
    type: ClassVar[Literal["tool_call_delta"]] = "tool_call_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """Arguments are final: ``arguments`` when they parsed, else ``error`` and ``raw``."""

    id: str
    arguments: Any = None
    error: str | None = None
    raw: str | None = None
    result: Any = None
    """A server-run call's result as the provider sent it (``None`` for client calls)."""
    type: ClassVar[Literal["tool_call_end"]] = "tool_call_end"

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """The response is over. A response that made client tool calls ends ``tool_use``
    unless cut; server-run calls leave the provider's stop reason as it was."""

    stop_reason: StopReason
    usage: Usage | None = None
    type: ClassVar[Literal["message_end"]] = "message_end"


@dataclass(frozen=True, slots=True)
class StreamError:
    """The provider reported an error, or the stream was malformed or cut short."""

    message: str
    raw: str | None = None
    type: ClassVar[Literal["stream_error"]] = "stream_error"


Event: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | MessageEnd
    | StreamError
)

EVENT_TYPES: tuple[str, ...] = (
    "text_delta",
    "thinking_delta",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_end",
    "message_end",
    "stream_error",
)


def event_to_dict(event: Event) -> dict[str, Any]:
    """JSON form of an event: its ``type`` first, then fields that are set.

    ``None`` optionals, empty ``fields`` and ``server: false`` are left out, except
    ``ToolCallEnd.arguments`` which is always present when the call succeeded (``{}`` and
    ``null`` are answers).
    """
    out: dict[str, Any] = {"type": event.type}
    for f in fields(event):
        if f.name == "values":
            continue  # in-process only: the values are already in the delta's text
        value = getattr(event, f.name)
        if value is False and f.name == "server":
            continue  # client calls, the usual case, read as before
        if isinstance(value, Usage):
            value = {k.name: getattr(value, k.name) for k in fields(value)}
            value = {k: v for k, v in value.items() if v is not None}
        elif isinstance(value, tuple):
            if not value:
                continue
            value = list(value)
        elif value is None:
            if isinstance(event, ToolCallEnd) and f.name == "arguments" and event.ok:
                out[f.name] = None
            continue
        out[f.name] = value
    return out


__all__ = [
    "EVENT_TYPES",
    "Event",
    "MessageEnd",
    "StopReason",
    "StreamError",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "Usage",
    "event_to_dict",
]

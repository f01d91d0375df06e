"""One model response as history: the assistant ``Message`` its events add up to.

The update engine shows a response to the editor; this keeps it for the model. Parts
are kept in the order the model produced them (thinking, text, calls, text...), with
adjacent deltas of one kind merged. Thinking keeps its signature (a ``signature``-only
delta closes the block it signs) and redacted payloads stay separate parts, so the same
backend gets them back byte for byte (docs/agent.md "Model switch"; the backends drop them
for any other backend). A call whose arguments did not parse keeps its raw text, which
the backends send back as ``{"INVALID_JSON": text}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from toolwire.backends import encodable, encodable_value
from toolwire.events import (
    Event,
    MessageEnd,
    StopReason,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.history import Message, Part, TextPart, ThinkingPart, ToolCallPart


@dataclass(slots=True)
class CollectedCall:
    """A call as the response made it: provider id, name, arguments (or the error)."""

    id: str
    name: str
    signature: str | None
    arguments: Any = None
    error: str | None = None
    ended: bool = False


class ResponseCollector:
    """Feed a response's events; ``message()`` is the assistant message they make."""

    def __init__(self) -> None:
        self._parts: list[Part | CollectedCall] = []
        self._text: list[str] = []
        self._thinking: list[str] = []
        self.calls: dict[str, CollectedCall] = {}
        self.stop_reason: StopReason | None = None
        self._server: set[str] = set()
        self.usage: Usage | None = None
        self.errors: list[str] = []

    def feed(self, event: Event) -> None:
        """Take one event."""
        match event:
            case TextDelta():
                self._close_thinking()
                self._text.append(event.text)
            case ThinkingDelta():
                self._thinking_delta(event)
            case ToolCallStart() if event.server:
                # The provider ran it and answered in this same response: never executed
                # here, not a call of the history that would wait for a result.
                self._server.add(event.id)
            case ToolCallEnd() if event.id in self._server:
                pass
            case ToolCallStart():
                self._close_text()
                self._close_thinking()
                call = CollectedCall(event.id, event.name, event.signature)
                self.calls[event.id] = call
                self._parts.append(call)
            case ToolCallEnd():
                self._end_call(event)
            case MessageEnd():
                self.stop_reason = event.stop_reason
                self.usage = event.usage
            case StreamError():
                self.errors.append(event.message)
            case ToolCallDelta():
                pass  # the arguments are read whole, from the call's end
            case _:
                assert_never(event)

    def ordered_calls(self) -> list[CollectedCall]:
        """The response's calls in the order the model made them."""
        return list(self.calls.values())

    def text(self) -> str:
        """The visible text of the response so far."""
        parts = [p.text for p in self._parts if isinstance(p, TextPart)]
        return "".join(parts) + "".join(self._text)

    def thinking(self) -> str:
        """The reasoning text of the response so far."""
        parts = [p.text for p in self._parts if isinstance(p, ThinkingPart)]
        return "".join(parts) + "".join(self._thinking)

    def message(self, backend: str) -> Message | None:
        """The assistant message (None when the response produced nothing)."""
        self._close_text()
        self._close_thinking()
        parts: list[Part] = []
        for part in self._parts:
            if isinstance(part, CollectedCall):
                arguments = part.arguments if part.ended else None
                parts.append(ToolCallPart(part.id, part.name, arguments, part.signature))
            else:
                parts.append(part)
        return Message("assistant", tuple(parts), backend=backend) if parts else None

    def _thinking_delta(self, event: ThinkingDelta) -> None:
        self._close_text()
        if event.redacted is not None:
            self._close_thinking()
            self._parts.append(ThinkingPart("", redacted=event.redacted))
            return
        self._thinking.append(event.text)
        if event.signature is not None:
            self._close_thinking(event.signature)

    def _end_call(self, event: ToolCallEnd) -> None:
        call = self.calls.get(event.id)
        if call is None:
            return
        call.ended = True
        if event.ok:  # whole now, so a surrogate left alone is half a pair: U+FFFD
            arguments = {} if event.arguments in (None, "") else event.arguments
            call.arguments = encodable_value(arguments)
        else:
            call.error = event.error or "invalid arguments"
            call.arguments = encodable(event.raw or "")

    def _close_text(self) -> None:
        if self._text:
            self._parts.append(TextPart("".join(self._text)))
            self._text = []

    def _close_thinking(self, signature: str | None = None) -> None:
        text = "".join(self._thinking)
        if text or signature:
            self._parts.append(ThinkingPart(text, signature=signature))
        self._thinking = []


__all__ = ["CollectedCall", "ResponseCollector"]

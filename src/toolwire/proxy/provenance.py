"""Which backend produced each assistant turn (docs/proxy.md, "Provenance").

Claude Code sends back every turn the proxy relayed, so the proxy can tell whose a turn
is by what it relayed: the ids of its tool calls and the signatures of its thinking.
When a response ends normally those keys are recorded against the backend that produced
it; on a later request a turn belongs to the backend one of its keys was recorded for.
Thinking then goes back only to its producer, and an unknown turn (a proxy restarted
with the memory store, a turn that never came through this proxy) belongs to nobody:
its thinking is dropped, never sent to a backend that cannot verify it.

Keys are short digests for signatures (they are kilobytes long) and the ids as they are.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping
from typing import Any

from toolwire.events import Event, MessageEnd, ThinkingDelta, ToolCallStart
from toolwire.history import Message, ThinkingPart, ToolCallPart

THINKING_BLOCKS = ("thinking", "redacted_thinking")


def _digest(kind: str, value: str) -> str:
    return f"{kind}:{hashlib.sha256(value.encode()).hexdigest()[:24]}"


def block_key(block: Mapping[str, Any]) -> str | None:
    """The provenance key of one Anthropic content block (None: it has none)."""
    kind = block.get("type")
    if kind == "tool_use":
        return f"tool:{block.get('id', '')}"
    if kind == "thinking" and block.get("signature"):
        return _digest("sig", str(block["signature"]))
    if kind == "redacted_thinking" and block.get("data"):
        return _digest("red", str(block["data"]))
    return None


def part_keys(message: Message) -> list[str]:
    """The provenance keys of a neutral assistant message."""
    keys: list[str] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            keys.append(f"tool:{part.id}")
        elif isinstance(part, ThinkingPart):
            if part.redacted:
                keys.append(_digest("red", part.redacted))
            elif part.signature:
                keys.append(_digest("sig", part.signature))
    return keys


def owner(keys: Iterable[str], produced: Mapping[str, str]) -> str | None:
    """The backend recorded for any of ``keys`` (the first found), else None."""
    for key in keys:
        found = produced.get(key)
        if found is not None:
            return found
    return None


def turn_owner(content: Any, produced: Mapping[str, str]) -> str | None:
    """The backend that produced a raw Anthropic assistant message's ``content``."""
    if not isinstance(content, list):
        return None
    keys = (block_key(b) for b in content if isinstance(b, Mapping))
    return owner((k for k in keys if k is not None), produced)


class ProvenanceRecorder:
    """Collects the keys of one response's turn as its events pass by."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.completed = False

    def see(self, event: Event) -> None:
        if isinstance(event, ToolCallStart):
            self.keys.append(f"tool:{event.id}")
        elif isinstance(event, ThinkingDelta):
            if event.redacted:
                self.keys.append(_digest("red", event.redacted))
            elif event.signature:
                self.keys.append(_digest("sig", event.signature))
        elif isinstance(event, MessageEnd):
            self.completed = event.stop_reason != "error"


async def watched(
    events: AsyncGenerator[Event, None],
    first: Event,
    done: Callable[[list[str]], Awaitable[None]],
) -> AsyncGenerator[Event, None]:
    """``events`` unchanged; when the response completes normally, ``done(keys)``.

    ``first`` (already taken from ``events`` by the caller) is counted, not yielded. A
    response that fails or is abandoned records nothing: the client will not send back a
    turn it did not get whole, and a partial one must not claim anything.
    """
    recorder = ProvenanceRecorder()
    recorder.see(first)
    try:
        if recorder.completed:
            await _record(recorder, done)
        async for event in events:
            recorder.see(event)
            if isinstance(event, MessageEnd) and recorder.completed:
                # Before yielding: the relay stops iterating at the message's end.
                await _record(recorder, done)
            yield event
    finally:
        await events.aclose()


async def _record(
    recorder: ProvenanceRecorder, done: Callable[[list[str]], Awaitable[None]]
) -> None:
    if recorder.keys:
        await done(recorder.keys)


__all__ = [
    "THINKING_BLOCKS",
    "ProvenanceRecorder",
    "block_key",
    "owner",
    "part_keys",
    "turn_owner",
    "watched",
]

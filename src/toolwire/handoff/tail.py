"""The verbatim part of a handoff: the last K turns, made valid for any provider.

A turn starts at a ``user`` message (tool results have their own role), so cutting
there never separates a call from its result (Gemini CLI's chat compression splits the
same way, google-gemini/gemini-cli ``chatCompressionService.ts``). The kept turns are
copied as they are, except:

* every thinking part is dropped. Another backend's thinking must never be sent on
  (its signature is bound to the backend that made it), and even the new backend's own
  thinking is bound to the exact prefix it was produced after, which the handoff block
  has just rewritten (Anthropic's preserved thinking,
  https://platform.claude.com/docs/en/build-with-claude/preserved-thinking);
* a call keeps its signature only when the target backend made it; signatures are
  never invented;
* a call that got no result becomes text saying it was interrupted: a structured call
  without its result is a 400 on Anthropic and OpenAI alike;
* a result that answers no call of the assistant message just before it becomes user
  text, so no provider sees a dangling id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from toolwire.handoff.extract import canonical_json
from toolwire.history import Message, Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from toolwire.history.pairing import orphans_message


def tail_start(history: Sequence[Message], end: int, keep_last: int) -> int:
    """Index in ``history[:end]`` where its last ``keep_last`` turns begin.

    ``end`` when ``keep_last`` is 0 or there is no user message; the first user
    message when there are fewer turns than ``keep_last``.
    """
    if keep_last <= 0:
        return end
    count, first = 0, end
    for index in range(end - 1, -1, -1):
        if history[index].role == "user":
            count, first = count + 1, index
            if count == keep_last:
                break
    return first


def sanitize_tail(messages: Sequence[Message], target: str | None) -> list[Message]:
    """``messages`` with calls and results paired, interruptions as text, no thinking."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.role == "tool":
            out.extend(orphans_message(message.parts))
        elif message.role == "user":
            parts = tuple(p for p in message.parts if not isinstance(p, ThinkingPart))
            out.append(message if len(parts) == len(message.parts) else Message("user", parts))
        else:
            results: list[ToolResultPart] = []
            while i < len(messages) and messages[i].role == "tool":
                results.extend(p for p in messages[i].parts if isinstance(p, ToolResultPart))
                i += 1
            out.extend(_assistant_turn(message, results, target))
    return out


def interrupted_text(call: ToolCallPart) -> str:
    """How a call that never returned is shown: as text, never as a structured call."""
    return (
        f"[Tool call {call.name} was interrupted before it returned a result; "
        f"arguments: {canonical_json(call.arguments)}]"
    )


def _assistant_turn(
    message: Message, results: list[ToolResultPart], target: str | None
) -> list[Message]:
    unused = list(results)
    parts: list[Part] = []
    paired: list[ToolResultPart] = []
    own = target is not None and message.backend == target
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            continue
        if not isinstance(part, ToolCallPart):
            parts.append(part)
            continue
        result = next((r for r in unused if r.call_id == part.id), None)
        if result is None:
            parts.append(TextPart(interrupted_text(part)))
            continue
        unused.remove(result)
        paired.append(result)
        signed = part.signature is None or own
        parts.append(part if signed else dataclasses.replace(part, signature=None))
    out: list[Message] = []
    if parts:
        out.append(Message("assistant", tuple(parts), message.backend))
    if paired:
        out.append(Message("tool", tuple(paired)))
    out.extend(orphans_message(unused))
    return out


__all__ = ["interrupted_text", "sanitize_tail", "tail_start"]

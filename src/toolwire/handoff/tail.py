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
* calls and results are paired by ``history.pairing.repair``, the rule and the words
  every request builder uses: a call that got no result is answered with a "not run"
  error (a structured call without its result is a 400 on Anthropic and OpenAI alike),
  and a result that answers no call of the assistant message just before it becomes
  user text, so no provider sees a dangling id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from toolwire.history import Message, Part, ThinkingPart, ToolCallPart
from toolwire.history.pairing import repair


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
    """``messages`` with calls and results paired (``repair``), no thinking, and only
    ``target``'s own call signatures."""
    out: list[Message] = []
    for message in repair(messages):
        parts = tuple(_kept(p, message, target) for p in message.parts if _sendable(p))
        if not parts:  # an assistant message that only thought
            continue
        out.append(message if parts == message.parts else dataclasses.replace(message, parts=parts))
    return out


def _sendable(part: Part) -> bool:
    return not isinstance(part, ThinkingPart)


def _kept(part: Part, message: Message, target: str | None) -> Part:
    """A call's signature is bound to the backend that made it: no other may see it."""
    own = target is not None and message.backend == target
    if isinstance(part, ToolCallPart) and part.signature is not None and not own:
        return dataclasses.replace(part, signature=None)
    return part


__all__ = ["sanitize_tail", "tail_start"]

"""Tool-result pairing and id normalization: the one set of rules (pure functions).

Every provider rejects a history whose tool calls and results do not pair up
(Anthropic wants each ``tool_use`` answered by a ``tool_result`` in the next user
message, OpenAI a ``tool`` message for each ``tool_calls`` id right after it, Gemini one
``functionResponse`` per ``functionCall``). A history can still arrive unpaired: a turn
cancelled before its tools ran, a handoff that cut the head of a conversation, a client
that sent a result twice. ``pair`` says which result answers which call, on ids alone;
``repair`` applies it to a neutral history (each request builder calls it first, so it
only has to translate), and the proxy's pass-through applies it to the client's raw
Anthropic messages, with the same words (``NOT_RUN``, ``orphan_text``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from typing import Any

from toolwire.history import Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart

NOT_RUN = "(no result: the call was interrupted before it ran)"
UNKNOWN_TOOL = "unknown"  # the name the importers give a result whose call is not in the history


def repair(messages: Iterable[Message]) -> list[Message]:
    """The history with every assistant call answered, in call order, right after it.

    * An assistant message with calls is followed by exactly one ``tool`` message holding
      one result per call, in call order, with the call's id (a call left unanswered gets
      an error result saying it did not run).
    * A result that answers no call of the assistant message just before it (an orphan)
      becomes user text, so its content is not lost and no provider sees a dangling id.
    """
    out: list[Message] = []
    items = list(messages)
    i = 0
    while i < len(items):
        message = items[i]
        i += 1
        if message.role == "tool":
            out.extend(orphans_message(message.parts))
            continue
        out.append(message)
        calls = message.tool_calls() if message.role == "assistant" else []
        if not calls:
            continue
        results: list[ToolResultPart] = []
        while i < len(items) and items[i].role == "tool":
            results.extend(p for p in items[i].parts if isinstance(p, ToolResultPart))
            i += 1
        paired, orphans = _pair(calls, results)
        out.append(Message("tool", tuple(paired)))
        out.extend(orphans_message(orphans))
    return out


def pair(call_ids: Sequence[str], result_ids: Sequence[str]) -> tuple[list[int | None], list[int]]:
    """Which result answers which call: for each call, in order, the index of its result in
    ``result_ids`` (None: unanswered), and the indices of the results that answer no call.

    Results pair with the calls of their id in order (a history may repeat an id), so a
    second result for an id answers a second call with it, or else is left over.
    """
    by_id: dict[str, deque[int]] = defaultdict(deque)
    for index, result_id in enumerate(result_ids):
        by_id[result_id].append(index)
    answers: list[int | None] = []
    for call_id in call_ids:
        queue = by_id.get(call_id)
        answers.append(queue.popleft() if queue else None)
    used = {i for i in answers if i is not None}
    return answers, [i for i in range(len(result_ids)) if i not in used]


def orphan_text(name: str | None, content: str, *, is_error: bool = False) -> str:
    """The user text a result that answers no call becomes (its content is not lost)."""
    call = f"{name} call" if name and name != UNKNOWN_TOOL else "tool call"
    return f"Result of an earlier {call}{' (error)' if is_error else ''}:\n{content}"


def _pair(
    calls: list[ToolCallPart], results: list[ToolResultPart]
) -> tuple[list[ToolResultPart], list[ToolResultPart]]:
    answers, left = pair([c.id for c in calls], [r.call_id for r in results])
    paired = [
        results[i] if i is not None else ToolResultPart(c.id, c.name, NOT_RUN, is_error=True)
        for c, i in zip(calls, answers, strict=True)
    ]
    return paired, [results[i] for i in left]


def orphans_message(parts: Iterable[Any]) -> list[Message]:
    """The results among ``parts`` as one user message of ``orphan_text`` (or nothing)."""
    texts = [
        orphan_text(p.name, p.content, is_error=p.is_error)
        for p in parts
        if isinstance(p, ToolResultPart)
    ]
    return [Message("user", tuple(TextPart(t) for t in texts))] if texts else []


def own_thinking(message: Message, backend: str) -> list[ThinkingPart]:
    """The thinking parts this backend may send back: only its own (a thinking block is
    signed by the provider that wrote it; another cannot verify it)."""
    if message.backend != backend:
        return []
    return [p for p in message.parts if isinstance(p, ThinkingPart)]


def as_object(arguments: Any) -> dict[str, Any]:
    """Call arguments as the JSON object every provider requires.

    Arguments that failed to parse are kept as ``{"INVALID_JSON": text}``, the shape
    Anthropic's fine-grained streaming docs suggest for sending invalid input back.
    """
    if isinstance(arguments, dict):
        return arguments
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        return {"INVALID_JSON": arguments}
    return {"value": arguments}


def arguments_json(arguments: Any) -> str:
    """The call's arguments as compact JSON text (OpenAI's ``arguments`` is a string)."""
    return json.dumps(as_object(arguments), ensure_ascii=False, separators=(",", ":"))


class IdMap:
    """Deterministic, collision-free mapping of call ids onto a provider's id rules.

    Characters outside ``[A-Za-z0-9_-]`` become ``_`` (Anthropic's ``tool_use.id`` pattern
    ``^[a-zA-Z0-9_-]+$``); ids longer than ``max_len`` keep a prefix plus a hash (OpenAI
    caps ``tool_call_id`` at 40 characters). An id already used earlier in the request
    (histories can repeat ``call_0`` across turns) gets a ``_2``, ``_3``... suffix, so a
    result always pairs with its own call. The same history always maps the same way.
    """

    _BAD = re.compile(r"[^A-Za-z0-9_-]")

    def __init__(self, max_len: int = 64) -> None:
        self._max_len = max_len
        self._used: set[str] = set()

    def turn(self, ids: Iterable[str]) -> list[str]:
        """Wire ids for one assistant message's calls, in order."""
        return [self._fresh(self._clean(i)) for i in ids]

    def _clean(self, raw: str) -> str:
        clean = self._BAD.sub("_", raw) or "call"
        if len(clean) > self._max_len:
            digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
            clean = f"{clean[: self._max_len - 11]}_{digest}"
        return clean

    def _fresh(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self._used:
            n += 1
            suffix = f"_{n}"
            candidate = base[: self._max_len - len(suffix)] + suffix
        self._used.add(candidate)
        return candidate


def text_of(message: Message) -> str:
    """Visible text of a message's text parts."""
    return "".join(p.text for p in message.parts if isinstance(p, TextPart))


__all__ = [
    "NOT_RUN",
    "UNKNOWN_TOOL",
    "IdMap",
    "arguments_json",
    "as_object",
    "orphan_text",
    "orphans_message",
    "own_thinking",
    "pair",
    "repair",
    "text_of",
]

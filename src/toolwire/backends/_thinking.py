"""The ``thought_level`` of a request (off, low, medium, high) in each provider's terms.

``off`` adds nothing, so a request without thinking is the same body as before there
was a setting. Budgets (tokens) for the providers that take a number, chosen so that
``low`` is a quick check, ``high`` a long deliberation, and all fit the usual 8k-64k
output reservations (docs/backends.md, "Thinking"); the budgets are the profiles'
(``toolwire.providers``):

=========  =========  ==========  ==========
level      Anthropic  Gemini      OpenAI
=========  =========  ==========  ==========
low        2,048      1,024       ``low``
medium     8,192      8,192       ``medium``
high       24,576     24,576      ``high``
=========  =========  ==========  ==========
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolwire.config.choices import ThoughtLevel
from toolwire.providers import PROFILES

ANTHROPIC_BUDGETS: Final[Mapping[str, int]] = PROFILES["anthropic"].thinking_budgets or {}
GEMINI_BUDGETS: Final[Mapping[str, int]] = PROFILES["gemini"].thinking_budgets or {}
ANTHROPIC_MIN_BUDGET: Final = 1024
"""Anthropic refuses a smaller ``budget_tokens``."""
ANSWER_ROOM: Final = 1024
"""Output tokens always left for the answer itself (``budget_tokens < max_tokens``)."""


def anthropic_thinking(
    level: ThoughtLevel, max_tokens: int, messages: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``thinking`` for a Messages body, or None to send none.

    The budget is cut to leave ``ANSWER_ROOM`` of ``max_tokens`` for the answer; when
    not even the minimum fits, no thinking. None too in a tool loop whose last call came
    without thinking (thinking turned on mid-turn, or a compacted tail): the API then
    wants the assistant message to start with a thinking block, and one is never invented.
    """
    if level not in ANTHROPIC_BUDGETS:
        return None
    budget = min(ANTHROPIC_BUDGETS[level], max_tokens - ANSWER_ROOM)
    if budget < ANTHROPIC_MIN_BUDGET or _unthought_tool_loop(messages):
        return None
    return {"type": "enabled", "budget_tokens": budget}


def _unthought_tool_loop(messages: Sequence[Mapping[str, Any]]) -> bool:
    """The body ends with tool results answering an assistant message without thinking."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return False
    last, before = messages[-1]["content"], messages[-2]
    if not last or last[0].get("type") != "tool_result" or before.get("role") != "assistant":
        return False
    first = before["content"][0].get("type") if before["content"] else None
    return first not in ("thinking", "redacted_thinking")


def openai_effort(level: ThoughtLevel) -> str | None:
    """Chat ``reasoning_effort`` / Responses ``reasoning.effort``; None when off."""
    return level if level in ("low", "medium", "high") else None


def gemini_thinking(level: ThoughtLevel) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig``; None when off (the model's own default)."""
    if level not in GEMINI_BUDGETS:
        return None
    return {"thinkingBudget": GEMINI_BUDGETS[level], "includeThoughts": True}


__all__ = [
    "ANSWER_ROOM",
    "ANTHROPIC_BUDGETS",
    "ANTHROPIC_MIN_BUDGET",
    "GEMINI_BUDGETS",
    "anthropic_thinking",
    "gemini_thinking",
    "openai_effort",
]

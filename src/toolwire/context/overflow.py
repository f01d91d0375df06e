"""Recognizing a provider's "the request is too long for the context window" answer.

Each provider words it differently, and the OpenAI- and Anthropic-compatible servers
(vLLM, llama.cpp, LM Studio, DeepSeek, Kimi, GLM, Mistral, Groq, OpenRouter) each have
their own variant, so the match is on the error's code when there is one and on a short
list of phrases otherwise. A false positive costs one compaction and one retry; a miss
leaves the session failing the same way on every prompt, so the list leans wide, but
only for statuses a context error can have (400, 413, 422; some servers answer 500).
"""

from __future__ import annotations

import re
from typing import Final

CODES: Final = frozenset({"context_length_exceeded", "string_above_max_length"})
PHRASES: Final = re.compile(
    "|".join(
        (
            r"prompt is too long",  # Anthropic
            r"exceed context limit",  # Anthropic, when the input fits but not with max_tokens
            r"maximum context length",  # OpenAI Chat, vLLM, DeepSeek, OpenRouter
            r"context[ _-]length[ _-]exceeded",
            r"exceeds? the context window",  # OpenAI Responses
            r"context window (?:exceeds|is exceeded|limit)",  # MiniMax
            r"exceeds the maximum number of tokens",  # Gemini
            r"exceeds the available context size",  # llama.cpp
            r"too large for model with \d+ maximum context length",  # Mistral
            r"exceeded model token limit",  # Kimi
            r"prompt exceeds max length",  # GLM
            r"input is too long",
            r"reduce the length of the messages",  # Groq
            r"context overflow",
            r"too many tokens",
        )
    ),
    re.IGNORECASE,
)
STATUSES: Final = frozenset({400, 413, 422, 500})
COUNTED: Final = re.compile(
    r"(\d+) tokens? >"  # Anthropic: "prompt is too long: 25123 tokens > 24000 maximum"
    r"|context limit: (\d+) \+"  # Anthropic: "...exceed context limit: 23975 + 2048 > 24000"
    r"|resulted in (\d+) tokens"  # OpenAI Chat, vLLM
    r"|input token count \(?(\d+)"  # Gemini
    r"|prompt contains (\d+) tokens"  # Mistral
    r"|requested (\d+) tokens",
    re.IGNORECASE,
)


def is_context_overflow(status: int, message: str, code: str | None = None) -> bool:
    """True when an error answer says the request did not fit the model's window."""
    if status not in STATUSES:
        return False
    return (code is not None and code in CODES) or PHRASES.search(message) is not None


LIMIT: Final = re.compile(
    r"tokens? > (\d+) maximum"  # Anthropic
    r"|context limit: \d+ \+ \d+ > (\d+)"  # Anthropic, input and max_tokens
    r"|maximum context length is (\d+)"  # OpenAI Chat, vLLM, DeepSeek
    r"|maximum number of tokens allowed \(?(\d+)"  # Gemini
    r"|model with (\d+) maximum context length"  # Mistral
    r"|model token limit:? (\d+)",  # Kimi
    re.IGNORECASE,
)


def window_limit(message: str) -> int | None:
    """The window the provider says the model has, when its error says so."""
    found = LIMIT.search(message)
    if found is None:
        return None
    return int(next(g for g in found.groups() if g is not None))


def counted_tokens(message: str) -> int | None:
    """How many tokens the provider counted in the refused request, when it says so."""
    found = COUNTED.search(message)
    if found is None:
        return None
    return int(next(g for g in found.groups() if g is not None))


__all__ = [
    "CODES",
    "COUNTED",
    "LIMIT",
    "PHRASES",
    "counted_tokens",
    "is_context_overflow",
    "window_limit",
]

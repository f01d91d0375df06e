"""How many tokens a model takes in, and how many of them its answer needs.

A backend's window is ``context_window`` from its ``[backends.NAME]`` table, else this
table's entry for the model's family, else ``UNKNOWN``: a conservative 32k, so an
unlisted local model compacts early rather than overflows (``toolwire config`` says so
in one line). The answer's share (``reserved``) is ``max_output_tokens`` when configured,
else the family's output limit, and never more than ``limits.max_tokens``, which is what
each request asks for: that is the room the request must leave.

Families match by the longest prefix of the model id, lowercased, after any router
prefix (``anthropic/claude-sonnet-4`` on OpenRouter, ``models/gemini-2.5-pro``), so dated
ids (``claude-sonnet-4-5-20250929``) and local tags (``qwen3-coder:30b``) find theirs. The
figures are the providers' published limits (docs/context.md has the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: (model id prefix, context window, output limit), in tokens.
FAMILIES: Final[tuple[tuple[str, int, int], ...]] = (
    # Anthropic
    ("claude-opus-4-5", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-3-5", 200_000, 8_192),
    ("claude-3", 200_000, 4_096),
    ("claude", 200_000, 32_000),
    # OpenAI
    ("gpt-5", 400_000, 128_000),
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-4o", 128_000, 16_384),
    ("gpt-4-turbo", 128_000, 4_096),
    ("gpt-4", 8_192, 4_096),
    ("gpt-3.5-turbo", 16_385, 4_096),
    ("gpt-oss", 131_072, 32_768),
    ("o1", 200_000, 100_000),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    ("codex-mini", 200_000, 100_000),
    # Google
    ("gemini-1.5-pro", 2_097_152, 8_192),
    ("gemini-1.5", 1_048_576, 8_192),
    ("gemini-2.0", 1_048_576, 8_192),
    ("gemini-2.5", 1_048_576, 65_536),
    ("gemini-3", 1_048_576, 65_536),
    ("gemini", 1_048_576, 8_192),
    # Anthropic- and OpenAI-compatible services, and common local models
    ("glm-4.6", 200_000, 128_000),
    ("glm-4.5", 128_000, 96_000),
    ("kimi-k2-thinking", 262_144, 32_768),
    ("kimi-k2-0905", 262_144, 32_768),
    ("kimi-k2", 131_072, 32_768),
    ("deepseek-reasoner", 128_000, 64_000),
    ("deepseek-chat", 128_000, 8_000),
    ("minimax-m2", 204_800, 32_768),
    ("qwen3-coder", 262_144, 65_536),
    ("qwen2.5-coder", 32_768, 8_192),
)
UNKNOWN_WINDOW: Final = 32_768
UNKNOWN_OUTPUT: Final = 8_192


@dataclass(frozen=True, slots=True)
class Window:
    """A backend's context window and the part of it kept for the answer, in tokens."""

    size: int
    reserved: int
    source: str
    """Where ``size`` came from: ``config``, ``family FAMILY`` or ``unknown model``."""

    @property
    def room(self) -> int:
        """Tokens a request may hold: the window less the answer's share."""
        return max(1, self.size - self.reserved)

    @property
    def known(self) -> bool:
        return self.source != "unknown model"


def family(model: str) -> tuple[str, int, int] | None:
    """The table row for ``model`` (longest matching prefix), or None."""
    name = model.lower().rsplit("/", 1)[-1]
    best = None
    for row in FAMILIES:
        if name.startswith(row[0]) and (best is None or len(row[0]) > len(best[0])):
            best = row
    return best


def window_for(
    model: str,
    *,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
    max_tokens: int | None = None,
) -> Window:
    """The window of ``model``; configured values win over the table."""
    row = family(model)
    if context_window is not None:
        size, source = context_window, "config"
    elif row is not None:
        size, source = row[1], f"family {row[0]}"
    else:
        size, source = UNKNOWN_WINDOW, "unknown model"
    output = max_output_tokens or (row[2] if row is not None else UNKNOWN_OUTPUT)
    if max_tokens is not None and max_output_tokens is None:
        output = min(output, max_tokens)
    # An answer may never take more than half the window: a misconfigured 8k window with
    # 8k of output would leave no room for the request at all.
    return Window(size, min(output, size // 2), source)


__all__ = ["FAMILIES", "UNKNOWN_OUTPUT", "UNKNOWN_WINDOW", "Window", "family", "window_for"]

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
figures are the providers' published limits, kept in their profiles
(``toolwire.providers``; docs/context.md has the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from toolwire.providers import COMPATIBLE_FAMILIES, PROFILES


def families() -> tuple[tuple[str, int, int], ...]:
    """(model id prefix, context window, output limit), in tokens: each registered
    provider's own families (its profile's), then the models that compatible services and
    local servers serve."""
    rows = (*(f for p in PROFILES.values() for f in p.families), *COMPATIBLE_FAMILIES)
    return tuple(dict.fromkeys((f.prefix, f.window, f.output) for f in rows))


FAMILIES: Final = families()
"""The built-in providers' table (``families()`` also holds a profile registered later)."""
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
    # Asked on every request the proxy plans: the answer is kept per model id while the
    # registry holds the same profiles (one registered later starts the memo afresh).
    global _memo
    profiles, found = _memo
    if len(found) >= _MEMO_MAX or profiles != tuple(PROFILES.values()):
        profiles, found = tuple(PROFILES.values()), {}
        _memo = (profiles, found)
    if model not in found:
        found[model] = _longest(model)
    return found[model]


_MEMO_MAX: Final = 512
_memo: tuple[tuple[object, ...], dict[str, tuple[str, int, int] | None]] = ((), {})


def _longest(model: str) -> tuple[str, int, int] | None:
    name = model.lower().rsplit("/", 1)[-1]
    best = None
    for row in families():
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


__all__ = [
    "FAMILIES",
    "UNKNOWN_OUTPUT",
    "UNKNOWN_WINDOW",
    "Window",
    "families",
    "family",
    "window_for",
]

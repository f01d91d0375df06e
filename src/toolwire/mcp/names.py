"""Model-facing tool names: ``mcp__<server>__<tool>``, valid for every provider.

Anthropic, OpenAI and Gemini all accept ``^[A-Za-z0-9_-]{1,64}$``, so a name that already
matches stays exactly as the server wrote it (``mcp__everything__get-sum``); the model
then sees the names the user knows. Only what a provider would reject is rewritten:
other characters become ``_`` and an over-long name is cut with a short hash of the
original, so two long names that share a prefix stay apart and the same inputs always
give the same names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

PREFIX: Final = "mcp"
MAX_LEN: Final = 64
VALID: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INVALID_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN: Final = 8


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:_HASH_LEN]


def raw_name(server: str, tool: str) -> str:
    """The name before any rewriting."""
    return f"{PREFIX}__{server}__{tool}"


def model_name(server: str, tool: str) -> str:
    """The provider-safe name of one tool, ignoring collisions."""
    name = raw_name(server, tool)
    if VALID.match(name):
        return name
    name = _INVALID_CHAR.sub("_", name)
    if len(name) <= MAX_LEN:
        return name
    return f"{name[: MAX_LEN - _HASH_LEN - 1]}_{_digest(server, tool)}"


def _suffixed(name: str, server: str, tool: str, attempt: int) -> str:
    tag = _digest(server, tool, str(attempt))
    return f"{name[: MAX_LEN - _HASH_LEN - 1]}_{tag}"


def _order(pair: tuple[str, str]) -> tuple[bool, str, str]:
    return (not VALID.match(raw_name(*pair)), *pair)


def assign_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A distinct model name for each ``(server, tool)``.

    Pairs are visited in a fixed order, so the result depends only on the set of pairs:
    names kept as written first, then sorted by server and tool. The first pair to want
    a name keeps it, later ones get a hash suffix of their own ``(server, tool)``
    (``mcp__a__b__c`` is wanted by server ``a`` tool ``b__c`` and by server ``a__b``
    tool ``c``; ``mcp__a_b__c`` by ``a_b`` as written and by ``a.b`` rewritten).
    """
    taken: set[str] = set()
    out: dict[tuple[str, str], str] = {}
    for server, tool in sorted(set(pairs), key=_order):
        name = model_name(server, tool)
        attempt = 0
        while name in taken:
            name = _suffixed(model_name(server, tool), server, tool, attempt)
            attempt += 1
        taken.add(name)
        out[(server, tool)] = name
    return out


__all__ = ["MAX_LEN", "VALID", "assign_names", "model_name", "raw_name"]

"""Incremental JSON for streamed tool arguments (PLACEHOLDER: interface only, slow).

The real implementation replaces this module; the interface below is the contract.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Final outcome: ``value`` when ``error`` is None, else ``error`` with ``raw`` text."""

    value: Any
    error: str | None
    raw: str


class JsonStream:
    """Feed JSON text in pieces; know which top-level fields completed, at any time."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def feed(self, text: str) -> tuple[str, ...]:
        """Consume ``text``; return top-level keys whose values it completed, in order."""
        self._parts.append(text)
        return ()

    @property
    def text(self) -> str:
        """All text fed so far."""
        return "".join(self._parts)

    @property
    def value(self) -> Any:
        """Partial value under the jsonriver rules (None before the root's type is known)."""
        return None

    def finish(self) -> ParseResult:
        """End of input: the final value (``""`` means ``{}``) or an error with the raw text."""
        raw = self.text
        if not raw.strip():
            return ParseResult({}, None, raw)
        try:
            return ParseResult(json.loads(raw), None, raw)
        except ValueError as e:
            return ParseResult(None, f"invalid JSON arguments: {e}", raw)


__all__ = ["JsonStream", "ParseResult"]

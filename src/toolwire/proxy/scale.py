"""Usage scaled to the client's window, so Claude Code compacts in time on a smaller model.

Claude Code decides when to compact from the usage each response reports, measured
against the window it assumes for a Claude model: 200,000 tokens, or 1,000,000 for the
1M variants (a ``[1m]`` model, sent as the ``context-1m-...`` beta). Routed to a 32k
model it would wait for 200k. So when the backend's window is smaller, every input-side
count the proxy reports (``input_tokens`` and the cache reads and writes, which Claude
Code adds to it) is multiplied by the client's window over the part of the backend's a
request may fill (``Window.room``: the window less the answer's share). Claude Code
compacts at about 83% of its window; measured against the room, that is 83% of what the
backend can take in, whatever share its answers reserve (a quarter of a 32k window:
83% of the whole window would already be too much). ``output_tokens`` is never scaled
(it is what the answer cost, not how full the window is). docs/proxy.md, "Smaller
windows: scaled usage and compaction".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolwire.context import Window

CLAUDE_WINDOW: Final = 200_000
"""The window Claude Code assumes for a Claude model (its auto-compact measures to it)."""
CLAUDE_1M_WINDOW: Final = 1_000_000
"""The window of the 1M variants: a ``[1m]`` model, or a request with the 1M beta."""
_1M_BETA = "context-1m"  # the beta's prefix: ``context-1m-2025-08-07``
_1M_SUFFIX = "[1m]"
# The input-side counts of Anthropic's usage: Claude Code sums them into the context size.
INPUT_FIELDS: Final = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def client_window(model: str, headers: Mapping[str, str]) -> int:
    """The window Claude Code measures this request's usage against."""
    beta = headers.get("anthropic-beta", "")
    if _1M_BETA in beta or _1M_SUFFIX in model.lower():
        return CLAUDE_1M_WINDOW
    return CLAUDE_WINDOW


@dataclass(frozen=True, slots=True)
class Scale:
    """Input tokens of a backend that holds ``backend`` reported as a share of ``client``."""

    client: int
    backend: int

    def __call__(self, tokens: int) -> int:
        # Integer arithmetic, rounded up: exact, and a non-empty request never reads 0.
        return -(-tokens * self.client // self.backend)

    def usage(self, usage: Mapping[str, Any]) -> dict[str, Any]:
        """``usage`` (an Anthropic usage object) with its input-side counts scaled."""
        out = dict(usage)
        for name in INPUT_FIELDS:
            value = out.get(name)
            if type(value) is int:
                out[name] = self(value)
        return out

    def payload(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """A ``message_start`` or ``message_delta`` payload (or a whole message) with its
        usage scaled; any other payload unchanged (a copy)."""
        out = dict(payload)
        message = out.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            out["message"] = {**message, "usage": self.usage(message["usage"])}
        if isinstance(out.get("usage"), dict):
            out["usage"] = self.usage(out["usage"])
        return out


def scale_for(client: int, window: Window) -> Scale | None:
    """The scale from a backend's ``window`` to the ``client``'s, or None when the
    backend's is not smaller (a window as large is reported as it is)."""
    return Scale(client, window.room) if window.size < client else None


__all__ = [
    "CLAUDE_1M_WINDOW",
    "CLAUDE_WINDOW",
    "INPUT_FIELDS",
    "Scale",
    "client_window",
    "scale_for",
]

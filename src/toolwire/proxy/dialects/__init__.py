"""The client dialects the proxy serves beside Anthropic's Messages API (``base.py``
says what one is; docs/proxy.md, "Adding a dialect"). A new one is one line here."""

from __future__ import annotations

from toolwire.proxy.dialects.base import Dialect, Host, Imported, Payload
from toolwire.proxy.dialects.gemini import GEMINI

DIALECTS: tuple[Dialect, ...] = (GEMINI,)


def dialect_of(path: str) -> Dialect | None:
    """The dialect serving ``path`` (None: Anthropic's, the proxy's own)."""
    return next((d for d in DIALECTS if path.startswith(d.prefixes)), None)


__all__ = ["DIALECTS", "Dialect", "Host", "Imported", "Payload", "dialect_of"]

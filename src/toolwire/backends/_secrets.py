"""Keep API keys out of everything toolwire writes: error messages, cassettes, logs."""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"

# Shapes of provider keys and credentials: OpenAI/Anthropic/DeepSeek style ``sk-...``,
# Google ``AIza...``, bearer tokens, and the values of credential headers or JSON fields.
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(
        r"(?i)([\"']?(?:authorization|x-api-key|x-goog-api-key|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)"
        r"[^\"'\s,}]{4,}"
    ),
)


def scrub(text: str, known: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret and anything shaped like a key replaced."""
    for secret in known:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(_keep_label, text)
    return text


def _keep_label(m: re.Match[str]) -> str:
    # Patterns with a group keep their label ("Bearer ", "x-api-key: ") and lose the value.
    return (m.group(1) if m.groups() else "") + REDACTED


__all__ = ["REDACTED", "scrub"]

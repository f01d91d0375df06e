"""Keep API keys out of everything toolwire writes: error messages, cassettes, logs.

``mask_urls`` hides the credentials a URL can carry (``http://user:PASSWORD@host``, a
``?key=...`` or ``&token=...`` query value) wherever a URL appears in a text: a
configured ``base_url`` or MCP server URL ends up in error messages, in the transcript
stored in ``sessions.db``, in the proxy's error bodies and in ``toolwire config``.
``scrub`` applies it too.
"""

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


# The userinfo of a URL: ``scheme://user:password@`` or ``scheme://name@`` (a lone name
# there is how a token is often passed: ``https://TOKEN@host``). Greedy, so it runs to the
# last ``@`` before the path: a password may hold an unencoded ``@``.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/?#\"'<>]*)@")
# A query or fragment parameter whose name says it holds a secret, and its value.
_QUERY = re.compile(
    r"(?i)([?&;#](?:[\w.\-]*(?:key|token|secret|passw|signature|credential)[\w.\-]*"
    r"|sig|pwd|auth|code)=)([^&#\s\"'<>]+)"
)


def mask_urls(text: str) -> str:
    """``text`` with the password (or lone user name) of every URL's userinfo and the
    value of every secret-looking query parameter replaced; the rest stays readable."""
    text = _USERINFO.sub(_hide_userinfo, text)
    return _QUERY.sub(lambda m: m.group(1) + REDACTED, text)


def _hide_userinfo(m: re.Match[str]) -> str:
    user, colon, _ = m.group(2).partition(":")
    return f"{m.group(1)}{user}:{REDACTED}@" if colon else f"{m.group(1)}{REDACTED}@"


def scrub(text: str, known: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret, URL credential and anything shaped like a key
    replaced."""
    for secret in known:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    text = mask_urls(text)
    for pattern in _PATTERNS:
        text = pattern.sub(_keep_label, text)
    return text


def _keep_label(m: re.Match[str]) -> str:
    # Patterns with a group keep their label ("Bearer ", "x-api-key: ") and lose the value.
    return (m.group(1) if m.groups() else "") + REDACTED


__all__ = ["REDACTED", "mask_urls", "scrub"]

"""What a secret looks like, and the two ways toolwire hides one.

Every place that shows or writes text a key could be in uses these shapes: ``scrub``
replaces a key whole (error messages, cassettes, logs, the proxy's error bodies) and
``mask`` shows a recognisable stub of one (``toolwire config``, an MCP server's command
line: ``sk-a…f3``).

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

# Keys by their prefix: OpenAI/Anthropic/DeepSeek ``sk-``, GitHub, GitLab, Slack, Google
# ``AIza``, AWS access key ids.
KEY_PREFIXED = re.compile(
    r"\b(?:sk-|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abeprs]-|AIza|AKIA|ASIA)"
    r"[A-Za-z0-9_\-]{8,}"
)
# The credential after an HTTP auth scheme: ``Bearer X``, ``Basic X``, ``token X``. After
# the last two only a value with a digit or base64 sign: "basic authentication failed"
# and "token estimate" are prose that error messages carry.
CREDENTIAL = re.compile(
    r"(?i)(\bbearer\s+|\b(?:basic|token)\s+(?=[^\s\"']*[0-9=+/]))([A-Za-z0-9._~+/=\-]{8,})"
)
# The value of a credential header or JSON field, label kept.
_LABELLED = re.compile(
    r"(?i)([\"']?(?:authorization|x-api-key|x-goog-api-key|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)"
    r"[^\"'\s,}]{4,}"
)
# A long run of key characters: a key when it mixes cases and digits, or is long hex.
_RUN = re.compile(r"[A-Za-z0-9_\-+/=]{24,}")


def random_run(run: str) -> bool:
    """A run of key characters that looks generated: names, paths and versions do not
    mix upper, lower and digits, nor run 32 hex digits."""
    mixed = all(any(test(c) for c in run) for test in (str.isupper, str.islower, str.isdigit))
    return mixed or bool(re.fullmatch(r"[0-9a-fA-F]{32,}", run))


def mask(secret: str) -> str:
    """A key shown without giving it away: ``sk-a…f3``; short values show nothing."""
    if len(secret) < 12:
        return "…"
    return f"{secret[:4]}…{secret[-2:]}"


def mask_keys(text: str) -> str:
    """``text`` with every part shaped like a key shown as its ``mask``; the rest as is."""
    text = KEY_PREFIXED.sub(lambda m: mask(m.group(0)), text)
    text = CREDENTIAL.sub(lambda m: m.group(1) + mask(m.group(2)), text)
    return _RUN.sub(lambda m: mask(m.group(0)) if random_run(m.group(0)) else m.group(0), text)


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
    text = KEY_PREFIXED.sub(REDACTED, text)
    text = CREDENTIAL.sub(lambda m: m.group(1) + REDACTED, text)
    return _LABELLED.sub(lambda m: m.group(1) + REDACTED, text)


__all__ = [
    "CREDENTIAL",
    "KEY_PREFIXED",
    "REDACTED",
    "mask",
    "mask_keys",
    "mask_urls",
    "random_run",
    "scrub",
]

"""``[proxy.limits]``: requests and tokens per minute per key, per user and per team,
counted in the shared state so every replica enforces one limit (docs/proxy.md,
"Shared limits").

A fixed one-minute window: one counter per key, user or team and minute, checked and
added atomically (``SharedState.take``: one Lua script in Redis). A sliding window would
need a sorted set of timestamps per counter (memory and work growing with the rate) or
two windows weighted (an estimate); the fixed window is one ``INCRBY`` and exact within
its minute, at the cost that a burst straddling two minutes may see up to twice the
rate. A request that does not fit is refused with Anthropic's 429
``rate_limit_error`` and a ``retry-after`` of the seconds left in the window.

Tokens are the request's input tokens as the proxy estimates what it sends upstream
(known before the request goes; the output is not known until it is done).

Who a request is: a ``Caller``. Until the proxy has keys per person, the caller's
``key`` is a digest of the credential the client sent (never the credential itself) and
``user``/``team`` are None; a key store passes the caller it knows to
``Sharing.admit(headers, tokens, caller=Caller(key_id, user, team))``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import NonNegativeInt

from toolwire.config.schema import Table
from toolwire.proxy.errors import RateLimitedError
from toolwire.proxy.shared import WINDOW, Charge, SharedState

ANONYMOUS = "anonymous"  # the key of a request that sent no credential (no proxy token)


class LimitsTable(Table):
    """``[proxy.limits]``: each a per-minute limit, 0 for none."""

    requests_per_minute: NonNegativeInt = 0
    """Per client key."""
    tokens_per_minute: NonNegativeInt = 0
    """Per client key: estimated input tokens."""
    user_requests_per_minute: NonNegativeInt = 0
    user_tokens_per_minute: NonNegativeInt = 0
    team_requests_per_minute: NonNegativeInt = 0
    team_tokens_per_minute: NonNegativeInt = 0

    @property
    def any(self) -> bool:
        """Whether any limit is set (else nothing is counted)."""
        return any(getattr(self, name) for name in type(self).model_fields)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request counts against: a key id (never the key), its user and team."""

    key: str
    user: str | None = None
    team: str | None = None


def caller_of(headers: Mapping[str, str]) -> Caller:
    """The caller of a request from its credential (``x-api-key`` or a Bearer token)."""
    credential = headers.get("x-api-key", "")
    scheme, _, bearer = headers.get("authorization", "").strip().partition(" ")
    if not credential and scheme.lower() == "bearer":
        credential = bearer.strip()
    if not credential:
        return Caller(ANONYMOUS)
    return Caller(hashlib.sha256(credential.encode()).hexdigest()[:32])


def charges(limits: LimitsTable, caller: Caller, tokens: int) -> list[Charge]:
    """What a request of ``tokens`` input tokens takes from ``caller``'s counters."""
    out: list[Charge] = []
    scopes = (
        ("key", caller.key, limits.requests_per_minute, limits.tokens_per_minute),
        ("user", caller.user, limits.user_requests_per_minute, limits.user_tokens_per_minute),
        ("team", caller.team, limits.team_requests_per_minute, limits.team_tokens_per_minute),
    )
    for scope, who, requests, tokens_limit in scopes:
        if who is None:
            continue
        if requests:
            out.append(Charge(f"{scope}:{who}:requests", requests, 1))
        if tokens_limit:
            out.append(Charge(f"{scope}:{who}:tokens", tokens_limit, tokens))
    return out


def admit(shared: SharedState, limits: LimitsTable, caller: Caller, tokens: int) -> None:
    """Count the request against ``caller``'s limits, or ``RateLimitedError`` (blocking
    with a Redis or SQLite state)."""
    wanted = charges(limits, caller, tokens)
    if not wanted:
        return
    wait = shared.take(wanted, WINDOW)
    if wait is not None:
        seconds = max(1, math.ceil(wait))  # whole seconds: retry-after's unit
        raise RateLimitedError(
            f"over the proxy's rate limit ([proxy.limits]); retry in {seconds} s", seconds
        )


__all__ = ["ANONYMOUS", "Caller", "LimitsTable", "admit", "caller_of", "charges"]

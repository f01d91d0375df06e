"""Failover without I/O: which backends a request may try, and which are cooling down.

A backend's ``fallbacks`` list (``[backends.NAME]``) is its route's order: the backend
itself, then each fallback. A backend that failed before its answer's first byte cools
down for ``failover_cooldown`` seconds, doubled on each further failure in a row up to
ten times that (or for the upstream's ``retry-after``, if longer); while cooling it is
skipped. A success ends the streak. The clock is injected, so the tests need no sleeps;
``cooling.py`` shares the table between replicas.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_FACTOR = 10  # a cooldown grows to at most ten times the first one
# What may be sent to the next backend: nothing reached the client, and the failure is
# the upstream's (rate limit, overload, outage, timeout), not the request's.
RETRYABLE_KINDS = frozenset({"rate_limit_error", "overloaded_error", "timeout_error"})


def retryable(status: int, kind: str) -> bool:
    """Whether an upstream failure with this status and Anthropic error kind fails over."""
    return status == 429 or status >= 500 or kind in RETRYABLE_KINDS


def chain(primary: str, fallbacks: Mapping[str, Sequence[str]]) -> list[str]:
    """``primary`` then its fallbacks, each once (a fallback's own list is not followed:
    the order is the one the primary's table wrote)."""
    out = [primary]
    for name in fallbacks.get(primary, ()):
        if name not in out:
            out.append(name)
    return out


@dataclass(slots=True)
class _Cooling:
    until: float
    streak: int


@dataclass(slots=True)
class Cooldowns:
    """Per backend: until when it is skipped, and how many failures in a row it had."""

    base: float
    clock: Callable[[], float] = time.monotonic
    _table: dict[str, _Cooling] = field(default_factory=dict)

    def fail(self, name: str, at_least: float = 0.0) -> float:
        """Record a failure of ``name``; the seconds it now cools down for (``at_least``:
        the upstream's ``retry-after``)."""
        now = self.clock()
        previous = self._table.get(name)
        streak = 1 if previous is None else previous.streak + 1
        seconds: float = min(self.base * 2.0 ** (streak - 1), self.base * MAX_FACTOR)
        seconds = max(seconds, at_least)
        self._table[name] = _Cooling(now + seconds, streak)
        return seconds

    def hold(self, name: str, seconds: float) -> None:
        """Skip ``name`` for exactly ``seconds`` (an upstream key's ``retry-after``)."""
        previous = self._table.get(name)
        streak = 1 if previous is None else previous.streak + 1
        self._table[name] = _Cooling(self.clock() + seconds, streak)

    def succeed(self, name: str) -> None:
        """``name`` answered: its next failure cools it for the base time again."""
        self._table.pop(name, None)

    def cooling(self, name: str) -> bool:
        """Whether ``name`` is to be skipped now."""
        entry = self._table.get(name)
        return entry is not None and self.clock() < entry.until

    def standing(self, name: str) -> tuple[float, int]:
        """Seconds ``name`` is still skipped for (0: it is not) and its failures in a row."""
        entry = self._table.get(name)
        if entry is None:
            return 0.0, 0
        return max(0.0, entry.until - self.clock()), entry.streak

    def order(self, names: Sequence[str]) -> list[str]:
        """``names`` to try, in order: those not cooling; when every one is cooling, all
        of them, the soonest back first (a request is never refused untried)."""
        ready = [n for n in names if not self.cooling(n)]
        if ready:
            return ready
        return sorted(names, key=lambda n: self._table[n].until)


__all__ = ["MAX_FACTOR", "Cooldowns", "chain", "retryable"]

"""State every proxy replica must agree on: cooldowns, rate-limit counters, key pins.

``SharedState`` is what ``cooling.py``, ``ratelimit.py`` and ``pools.py`` need from the
``[proxy] store``: ``memory`` (``MemoryShared``: this process), a SQLite file
(``SQLiteShared``: the processes of one host) or a ``redis://`` URL (``RedisShared``:
every replica). Wall-clock seconds throughout: a monotonic clock means nothing to
another process. Nothing here holds a secret: cooldowns and pins name a key's
*variable*, counters a hash of the client's credential.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from toolwire.proxy.shared.memory import MemoryShared
from toolwire.proxy.shared.redis import RedisShared
from toolwire.proxy.shared.sqlite import SQLiteShared
from toolwire.proxy.shared.types import Charge, Cooling
from toolwire.proxy.stores.redis import is_redis_url

WINDOW = 60  # seconds: limits are per minute
PIN_TTL = 24 * 3600  # seconds a session's key choice is remembered after its last request


class SharedState(Protocol):
    """What the replicas share; every implementation has these methods."""

    blocking: bool
    """Whether a call may wait (a network round trip, a file lock): run it in a thread."""

    def take(self, charges: Sequence[Charge], window: int) -> float | None:
        """Atomically: if every charge fits its counter in the current ``window``-second
        window, add them all and return None; else add none and return the seconds
        until the window ends. A counter at zero takes any amount (a request bigger
        than a limit passes alone, else it never could)."""
        ...

    def cooled(self) -> Mapping[str, Cooling]:
        """Every cooldown entry recorded, by name."""
        ...

    def cool(self, name: str, entry: Cooling) -> None:
        """Record (replace) ``name``'s cooldown entry."""
        ...

    def warm(self, name: str) -> None:
        """Forget ``name``'s cooldown entry (it answered)."""
        ...

    def pinned(self, key: str) -> str | None:
        """The value pinned under ``key`` (None: none, or expired)."""
        ...

    def pin(self, key: str, value: str, ttl: int) -> None:
        """Pin ``value`` under ``key`` for ``ttl`` seconds."""
        ...


def open_shared(spec: str) -> SharedState:
    """The shared state living where ``[proxy] store`` says (``memory``, a ``redis://``
    URL, or a SQLite file path)."""
    if spec == "memory":
        return MemoryShared()
    return RedisShared(spec) if is_redis_url(spec) else SQLiteShared(spec)


__all__ = [
    "PIN_TTL",
    "WINDOW",
    "Charge",
    "Cooling",
    "MemoryShared",
    "RedisShared",
    "SQLiteShared",
    "SharedState",
    "open_shared",
]

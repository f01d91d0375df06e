"""Cooldowns every replica sees (docs/proxy.md, "Shared limits"): ``failover.Cooldowns``
on the wall clock, read from and written to the shared state.

The table is pulled from the shared state before each request is planned (in the
planning thread when the state is Redis or SQLite: one ``HGETALL``), and a failure or a
success is pushed before the response that follows it leaves, so a 429 answered
through one replica is skipped by another from its next request.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from toolwire.proxy.failover import Cooldowns, _Cooling
from toolwire.proxy.shared import SharedState
from toolwire.proxy.shared.types import Cooling


@dataclass(slots=True)
class SharedCooldowns(Cooldowns):
    """``Cooldowns`` kept in ``shared``: changes wait in ``_pending`` until ``push``."""

    shared: SharedState | None = None
    _pending: dict[str, Cooling | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.clock = time.time  # shared with other processes: wall-clock time

    def fail(self, name: str, at_least: float = 0.0) -> float:
        seconds = Cooldowns.fail(self, name, at_least)
        self._changed(name)
        return seconds

    def hold(self, name: str, seconds: float) -> None:
        Cooldowns.hold(self, name, seconds)
        self._changed(name)

    def succeed(self, name: str) -> None:
        # The common case, a success without a streak, writes nothing.
        if name in self._table:
            Cooldowns.succeed(self, name)
            self._changed(name)

    @property
    def pending(self) -> bool:
        """Whether changes wait for ``push``."""
        return bool(self._pending)

    def push(self) -> None:
        """Write the waiting changes to the shared state (blocking: Redis, SQLite)."""
        if self.shared is None:
            return
        with self._lock:
            pending, self._pending = self._pending, {}
        for name, entry in pending.items():
            if entry is None:
                self.shared.warm(name)
            else:
                self.shared.cool(name, entry)

    def pull(self) -> None:
        """Push, then replace the local table with the shared one (blocking)."""
        if self.shared is None:
            return
        self.push()
        table = self.shared.cooled()
        self._table = {n: _Cooling(e.until, e.streak) for n, e in table.items()}

    def _changed(self, name: str) -> None:
        entry = self._table.get(name)
        with self._lock:
            self._pending[name] = None if entry is None else Cooling(entry.until, entry.streak)


__all__ = ["SharedCooldowns"]

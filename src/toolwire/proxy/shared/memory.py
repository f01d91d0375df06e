"""The shared state of one process (``[proxy] store = "memory"``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence

from toolwire.proxy.shared.types import Charge, Cooling

MAX_PINS = 100_000  # a few dozen bytes each; the least recently pinned go first


class MemoryShared:
    """Counters, cooldowns and pins in dicts; ``clock``: wall-clock seconds (injected in
    tests)."""

    blocking = False  # dict work under a lock: cheaper than a thread hop

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._counters: dict[str, tuple[int, int]] = {}  # name -> (window, count)
        self._cooled: dict[str, Cooling] = {}
        self._pins: dict[str, tuple[str, float]] = {}  # key -> (value, expiry)

    def take(self, charges: Sequence[Charge], window: int) -> float | None:
        now = self._clock()
        current = int(now // window)
        with self._lock:
            counts = [self._count(c.counter, current) for c in charges]
            if any(n > 0 and n + c.amount > c.limit for c, n in zip(charges, counts, strict=True)):
                return (current + 1) * window - now
            for charge, n in zip(charges, counts, strict=True):
                self._counters[charge.counter] = (current, n + charge.amount)
            return None

    def _count(self, counter: str, current: int) -> int:
        held = self._counters.get(counter)
        return held[1] if held is not None and held[0] == current else 0

    def cooled(self) -> Mapping[str, Cooling]:
        with self._lock:
            return dict(self._cooled)

    def cool(self, name: str, entry: Cooling) -> None:
        with self._lock:
            self._cooled[name] = entry

    def warm(self, name: str) -> None:
        with self._lock:
            self._cooled.pop(name, None)

    def pinned(self, key: str) -> str | None:
        with self._lock:
            held = self._pins.get(key)
        return held[0] if held is not None and held[1] > self._clock() else None

    def pin(self, key: str, value: str, ttl: int) -> None:
        with self._lock:
            self._pins.pop(key, None)
            self._pins[key] = (value, self._clock() + ttl)
            while len(self._pins) > MAX_PINS:
                del self._pins[next(iter(self._pins))]


__all__ = ["MAX_PINS", "MemoryShared"]

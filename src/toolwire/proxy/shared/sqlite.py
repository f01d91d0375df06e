"""The shared state in a SQLite file: the proxy processes of one host (``[proxy] store =
"PATH"``, the session store's file; its own tables)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from toolwire.proxy.shared.types import Charge, Cooling
from toolwire.proxy.stores.sqlite import shared_file

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS shared_counters "
    "(name TEXT PRIMARY KEY, win INTEGER NOT NULL, n INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shared_cooldowns "
    "(name TEXT PRIMARY KEY, until REAL NOT NULL, streak INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shared_pins "
    "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL NOT NULL)",
)


class SQLiteShared:
    """Counters, cooldowns and pins in three tables of a SQLite file."""

    blocking = True  # another process may hold the file's write lock

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._db = shared_file(path, _SCHEMA, "shared")

    def take(self, charges: Sequence[Charge], window: int) -> float | None:
        now = self._clock()
        current = int(now // window)
        with self._lock:
            # BEGIN IMMEDIATE: the write lock before reading, so two processes cannot
            # both see room for the last request.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                counts = [self._count(c.counter, current) for c in charges]
                pairs = list(zip(charges, counts, strict=True))
                if any(n > 0 and n + c.amount > c.limit for c, n in pairs):
                    return (current + 1) * window - now
                for charge, n in pairs:
                    self._db.execute(
                        "INSERT INTO shared_counters (name, win, n) VALUES (?, ?, ?) "
                        "ON CONFLICT(name) DO UPDATE SET win = excluded.win, n = excluded.n",
                        (charge.counter, current, n + charge.amount),
                    )
                return None
            finally:
                if self._db.in_transaction:
                    self._db.execute("COMMIT")

    def _count(self, counter: str, current: int) -> int:
        row = self._db.execute(
            "SELECT n FROM shared_counters WHERE name = ? AND win = ?", (counter, current)
        ).fetchone()
        return int(row[0]) if row else 0

    def cooled(self) -> Mapping[str, Cooling]:
        with self._lock:
            rows = self._db.execute("SELECT name, until, streak FROM shared_cooldowns").fetchall()
        return {str(n): Cooling(float(u), int(s)) for n, u, s in rows}

    def cool(self, name: str, entry: Cooling) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO shared_cooldowns (name, until, streak) VALUES (?, ?, ?)",
                (name, entry.until, entry.streak),
            )

    def warm(self, name: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM shared_cooldowns WHERE name = ?", (name,))

    def pinned(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM shared_pins WHERE key = ? AND expires > ?", (key, self._clock())
            ).fetchone()
        return str(row[0]) if row else None

    def pin(self, key: str, value: str, ttl: int) -> None:
        now = self._clock()
        with self._lock:
            # Expired pins go when a new one comes: the table stays the size of the
            # sessions of the last ``ttl`` seconds.
            self._db.execute("DELETE FROM shared_pins WHERE expires <= ?", (now,))
            self._db.execute(
                "INSERT OR REPLACE INTO shared_pins (key, value, expires) VALUES (?, ?, ?)",
                (key, value, now + ttl),
            )

    def close(self) -> None:
        self._db.close()


__all__ = ["SQLiteShared"]

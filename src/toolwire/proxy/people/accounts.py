"""Where keys, budgets and spend counters live: the ``Accounts`` protocol, in memory and
in SQLite (Redis: ``redis_accounts.py``), opened from ``[proxy] store`` by ``open_accounts``.

A reservation is one atomic step over every counter it charges (the user's and the
team's): either all of them have room and all are charged, or none is. Memory does it
under a lock, SQLite in one ``BEGIN IMMEDIATE`` transaction (proxy processes sharing the
file queue on its write lock), Redis in one Lua script (``redis_accounts.py``). Counters
are integers (micro-dollars) named ``SUBJECT:WINDOW``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from toolwire.proxy.people.keys import (
    Budget,
    Charge,
    KeyRecord,
    Refused,
    digest,
    new_key_id,
    new_secret,
    parse_budget,
)
from toolwire.proxy.stores.sqlite import shared_file


class Accounts(Protocol):
    """Keys, budgets and counters; every implementation has these methods."""

    blocking: bool
    """Whether a call may wait (a file lock, a round trip): then it runs off the loop."""

    def add(self, record: KeyRecord) -> None: ...
    def records(self) -> list[KeyRecord]: ...
    def revoke(self, key_id: str) -> bool: ...
    def update(self, record: KeyRecord) -> None:
        """Replace the stored record of ``record.id`` (an expiry set by a rotation)."""
        ...

    def find(self, digest: str) -> KeyRecord | None: ...
    def any_key(self) -> bool: ...
    def set_budget(self, subject: str, budget: Budget) -> None: ...
    def budgets(self, subjects: Iterable[str]) -> dict[str, Budget]: ...

    def reserve(self, charges: Sequence[Charge]) -> Refused | None:
        """Charge all of ``charges`` if each fits its limit, atomically; else the first
        that does not fit (and nothing is charged)."""
        ...

    def settle(self, charges: Sequence[Charge]) -> None:
        """Add each amount (the real cost minus the reserved one) without a check."""
        ...

    def spent(self, counter: str) -> int: ...

    def now(self) -> float:
        """The store's clock (Unix seconds), which budget windows follow: Redis's
        ``TIME``, so replicas whose clocks differ still share one window; the host's
        clock for memory and SQLite (one host)."""
        ...


class MemoryAccounts:
    """Everything in this process (tests, a single proxy without a shared store)."""

    blocking = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, KeyRecord] = {}  # digest -> record
        self._budgets: dict[str, Budget] = {}
        self._counters: dict[str, int] = {}

    def add(self, record: KeyRecord) -> None:
        with self._lock:
            self._keys[record.digest] = record

    def records(self) -> list[KeyRecord]:
        with self._lock:
            return sorted(self._keys.values(), key=lambda r: r.created)

    def revoke(self, key_id: str) -> bool:
        with self._lock:
            for d, record in self._keys.items():
                if record.id == key_id:
                    self._keys[d] = _revoked(record)
                    return True
        return False

    def update(self, record: KeyRecord) -> None:
        with self._lock:
            self._keys[record.digest] = record

    def find(self, digest: str) -> KeyRecord | None:
        with self._lock:
            return self._keys.get(digest)

    def any_key(self) -> bool:
        return bool(self._keys)

    def set_budget(self, subject: str, budget: Budget) -> None:
        with self._lock:
            self._budgets[subject] = budget

    def budgets(self, subjects: Iterable[str]) -> dict[str, Budget]:
        with self._lock:
            return {s: self._budgets[s] for s in subjects if s in self._budgets}

    def reserve(self, charges: Sequence[Charge]) -> Refused | None:
        with self._lock:
            for c in charges:
                spent = self._counters.get(c.counter, 0)
                if spent + c.amount > c.limit:
                    return Refused(c, spent)
            for c in charges:
                self._counters[c.counter] = self._counters.get(c.counter, 0) + c.amount
        return None

    def settle(self, charges: Sequence[Charge]) -> None:
        with self._lock:
            for c in charges:
                self._counters[c.counter] = self._counters.get(c.counter, 0) + c.amount

    def spent(self, counter: str) -> int:
        with self._lock:
            return self._counters.get(counter, 0)

    def now(self) -> float:
        return time.time()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS proxy_keys (digest TEXT PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
    " record TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS proxy_budgets (subject TEXT PRIMARY KEY, budget TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS proxy_spent (counter TEXT PRIMARY KEY, micros INTEGER NOT NULL)",
)
_ADD = "INSERT INTO proxy_spent (counter, micros) VALUES (?, ?) " + (
    "ON CONFLICT(counter) DO UPDATE SET micros = micros + excluded.micros"
)


class SQLiteAccounts:
    """In a SQLite file (the session store's, its own tables), shared by the processes
    of one host."""

    blocking = True

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = shared_file(path, _SCHEMA, "accounts")

    def add(self, record: KeyRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO proxy_keys (digest, id, record) VALUES (?, ?, ?)",
                (record.digest, record.id, record.to_json()),
            )

    def records(self) -> list[KeyRecord]:
        with self._lock:
            rows = self._db.execute("SELECT record FROM proxy_keys").fetchall()
        return sorted((KeyRecord.from_json(r[0]) for r in rows), key=lambda r: r.created)

    def revoke(self, key_id: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM proxy_keys WHERE id = ?", (key_id,)
            ).fetchone()
            if row is None:
                return False
            record = _revoked(KeyRecord.from_json(row[0]))
            self._db.execute(
                "UPDATE proxy_keys SET record = ? WHERE id = ?", (record.to_json(), key_id)
            )
        return True

    def update(self, record: KeyRecord) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE proxy_keys SET record = ? WHERE id = ?", (record.to_json(), record.id)
            )

    def find(self, digest: str) -> KeyRecord | None:
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM proxy_keys WHERE digest = ?", (digest,)
            ).fetchone()
        return KeyRecord.from_json(row[0]) if row else None

    def any_key(self) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM proxy_keys LIMIT 1").fetchone() is not None

    def set_budget(self, subject: str, budget: Budget) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO proxy_budgets (subject, budget) VALUES (?, ?) "
                "ON CONFLICT(subject) DO UPDATE SET budget = excluded.budget",
                (subject, budget.to_json()),
            )

    def budgets(self, subjects: Iterable[str]) -> dict[str, Budget]:
        found: dict[str, Budget] = {}
        with self._lock:
            for subject in subjects:
                row = self._db.execute(
                    "SELECT budget FROM proxy_budgets WHERE subject = ?", (subject,)
                ).fetchone()
                if row:
                    found[subject] = Budget.from_json(row[0])
        return found

    def reserve(self, charges: Sequence[Charge]) -> Refused | None:
        with self._lock, self._transaction():
            for c in charges:
                spent = self._spent(c.counter)
                if spent + c.amount > c.limit:
                    return Refused(c, spent)
            for c in charges:
                self._db.execute(_ADD, (c.counter, c.amount))
        return None

    def settle(self, charges: Sequence[Charge]) -> None:
        with self._lock, self._transaction():
            for c in charges:
                self._db.execute(_ADD, (c.counter, c.amount))

    def spent(self, counter: str) -> int:
        with self._lock:
            return self._spent(counter)

    def now(self) -> float:
        return time.time()  # the processes sharing the file share a host's clock

    def _spent(self, counter: str) -> int:
        row = self._db.execute(
            "SELECT micros FROM proxy_spent WHERE counter = ?", (counter,)
        ).fetchone()
        return int(row[0]) if row else 0

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the write lock before the read: another process's
        # reservation waits for this one instead of reading the same spent amount.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


def _revoked(record: KeyRecord) -> KeyRecord:
    return replace(record, revoked=True)


def issue(
    accounts: Accounts,
    user: str,
    *,
    team: str | None = None,
    budget: str | None = None,
    models: Sequence[str] = (),
    now: float | None = None,
    admin: bool = False,
    expires: float | None = None,
) -> tuple[KeyRecord, str]:
    """A new key for ``user`` stored (hashed) in ``accounts``, and its secret; ``budget``
    (``50usd/30d``: ``ValueError`` if not) becomes the user's, its windows from now;
    ``admin``: a named admin's key; ``expires``: Unix time it stops working."""
    now = time.time() if now is None else now
    parsed = parse_budget(budget, now) if budget else None
    secret = new_secret()
    record = KeyRecord(
        new_key_id(), digest(secret), user, team, tuple(models), now, budget=budget,
        admin=admin, expires=expires,
    )  # fmt: skip
    accounts.add(record)
    if parsed is not None:
        accounts.set_budget(f"user:{user}", parsed)
    return record, secret


def rotate(
    accounts: Accounts, key_id: str, grace: float, *, expires: float | None = None
) -> tuple[KeyRecord, str, KeyRecord]:
    """A new key like ``key_id`` (same user, team, models and role; the budget stays the
    user's, untouched), its secret, and the old record, which now expires ``grace``
    seconds from now (sooner if it already did); ``KeyError`` if no usable key has that id."""
    now = time.time()
    old = next((r for r in accounts.records() if r.id == key_id), None)
    if old is None or not old.usable(now):
        raise KeyError(key_id)
    until = now + grace if old.expires is None else min(old.expires, now + grace)
    old = replace(old, expires=until)
    accounts.update(old)
    record, secret = issue(
        accounts, old.user, team=old.team, models=old.models, now=now, admin=old.admin,
        expires=expires,
    )  # fmt: skip
    record = replace(record, budget=old.budget)
    accounts.update(record)
    return record, secret, old


def open_accounts(spec: str) -> Accounts:
    """The accounts beside the session store ``spec`` (``memory``, a path, ``redis://``)."""
    from toolwire.proxy.stores.redis import is_redis_url

    if spec == "memory":
        return MemoryAccounts()
    if is_redis_url(spec):
        from toolwire.proxy.people.redis_accounts import RedisAccounts

        return RedisAccounts(spec)
    return SQLiteAccounts(spec)


__all__ = ["Accounts", "MemoryAccounts", "SQLiteAccounts", "issue", "open_accounts", "rotate"]

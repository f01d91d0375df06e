"""The proxy's tables created and upgraded once, however many replicas start together.

Each component (``sessions``, ``accounts``, ``shared``, ``ledger``) has its steps: the
first creates its tables (``CREATE TABLE IF NOT EXISTS``), each later one upgrades them.
``toolwire_schema`` (component, version) records how many have run. Every start takes
the database's lock first, then runs the first step (harmless when the tables exist,
and it brings back one that was dropped) and the upgrades past the recorded version:

* PostgreSQL: one transaction holding ``pg_advisory_xact_lock``. Without it, two
  replicas creating one table at once both insert its row type, and the second dies on
  ``pg_type_typname_nsp_index`` (``IF NOT EXISTS`` checks before it inserts, unlocked);
* SQLite: ``BEGIN IMMEDIATE``, the file's write lock before the version is read;
* Redis (no tables: keys are made by their first write): a ``SET NX`` guard with an
  expiry around reading and raising the recorded version, so a future upgrade of the
  keys runs once; a guard left by a replica that died expires on its own.

A version above this code's (a newer toolwire migrated first) is left as it is: upgrades
only add, so an older replica still serves during a rolling upgrade.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)
Steps = Sequence[Sequence[str]]
"""SQL statements per version: ``steps[0]`` creates, ``steps[n]`` brings n to n + 1."""
VERSIONS = (
    "CREATE TABLE IF NOT EXISTS toolwire_schema "
    "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)
# One advisory lock id for every toolwire schema change (a bigint: 8 bytes of a digest).
PG_LOCK = int.from_bytes(hashlib.sha256(b"toolwire:schema").digest()[:8], "big", signed=True)
REDIS_SCHEMA = "toolwire:proxy:schema"
REDIS_GUARD = "toolwire:proxy:schema-guard"
GUARD_SECONDS = 30  # longer than any setup takes; a crashed holder's guard then expires
# Deletes the guard only if it is still this replica's (it may have expired meanwhile).
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def sqlite_schema(db: sqlite3.Connection, component: str, steps: Steps) -> None:
    """``component``'s steps run on a SQLite file under its write lock."""
    db.execute("BEGIN IMMEDIATE")
    try:
        _apply(db, component, steps, "?")
    except BaseException:
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def postgres_schema(db: Any, component: str, steps: Steps) -> None:
    """``component``'s steps run on PostgreSQL under the advisory lock (``db``: a
    psycopg connection in autocommit mode)."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (PG_LOCK,))
        _apply(db, component, steps, "%s")


def _apply(db: Any, component: str, steps: Steps, mark: str) -> None:
    db.execute(VERSIONS)
    for statement in steps[0]:
        db.execute(statement)
    row = db.execute(
        f"SELECT version FROM toolwire_schema WHERE component = {mark}", (component,)
    ).fetchone()
    # No row: made now, or by a version before the record, whose tables were step 1.
    done = 1 if row is None else int(row[0])
    for step in steps[done:]:
        for statement in step:
            db.execute(statement)
    if row is None or done < len(steps):
        db.execute(
            f"INSERT INTO toolwire_schema (component, version) VALUES ({mark}, {mark}) "
            "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
            (component, max(done, len(steps))),
        )


def redis_schema(
    client: Any, component: str, steps: Sequence[Callable[[Any], None]], *, wait: float = 30.0
) -> None:
    """``component``'s steps (functions of the client) past its recorded version, run by
    one replica under the ``SET NX`` guard while the others wait for it (``wait`` s)."""
    recorded = client.hget(REDIS_SCHEMA, component)
    if recorded is not None and int(recorded) >= len(steps):
        return  # the usual start: one round trip
    mine = secrets.token_hex(16)
    deadline = time.monotonic() + wait
    while not client.set(REDIS_GUARD, mine, nx=True, ex=GUARD_SECONDS):
        if time.monotonic() > deadline:
            raise TimeoutError(f"another replica held {REDIS_GUARD} for {wait:g} s")
        time.sleep(0.05)
    try:
        recorded = client.hget(REDIS_SCHEMA, component)  # another may have run them
        done = 0 if recorded is None else int(recorded)
        for step in steps[done:]:
            step(client)
        if done < len(steps):
            client.hset(REDIS_SCHEMA, component, len(steps))
    finally:
        client.eval(_RELEASE, 1, REDIS_GUARD, mine)


__all__ = [
    "GUARD_SECONDS",
    "PG_LOCK",
    "REDIS_GUARD",
    "REDIS_SCHEMA",
    "Steps",
    "postgres_schema",
    "redis_schema",
    "sqlite_schema",
]

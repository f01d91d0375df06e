"""The spend ledger: one row per request, written off the request path.

``[proxy] ledger`` is a SQLite file path (one machine) or a ``postgresql://`` URL (several
replicas, one database; the ``psycopg`` driver, imported only then). Rows go through
``Writer``: a queue and one thread that writes them in batches (and settles the budget
reservations, which need not hold a request either), drained when the proxy stops.
Times are Unix seconds (``at``) in both engines, so ``spend --since`` compares numbers.
"""

from __future__ import annotations

import importlib
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from toolwire.config.schema import ConfigError
from toolwire.proxy.stores.schema import postgres_schema, sqlite_schema

log = logging.getLogger(__name__)
PG_SCHEMES = ("postgresql://", "postgres://")
PG_MISSING = "a PostgreSQL ledger needs psycopg: pip install 'toolwire[postgres]'"
BATCH = 500  # rows per insert at most: a burst is a few round trips, not thousands


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One request: who, where, what it used and cost, how it ended."""

    at: float
    user: str
    team: str
    session: str
    backend: str
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    """Dollars."""
    status: str
    """``ok``, ``cut`` (the stream ended early), ``refused`` (over budget) or
    ``error NNN`` (the upstream refused it before its first byte)."""


COLUMNS = tuple(f.name for f in fields(LedgerRow))
_TYPES = {"at": "DOUBLE PRECISION", "cost": "DOUBLE PRECISION"}
_TEXT = {"user", "team", "session", "backend", "model", "status"}


def _schema(quote: Callable[[str], str]) -> str:
    columns = ", ".join(
        f"{quote(c)} {_TYPES.get(c, 'TEXT' if c in _TEXT else 'BIGINT')} NOT NULL" for c in COLUMNS
    )
    return f"CREATE TABLE IF NOT EXISTS toolwire_ledger ({columns})"


def _q(name: str) -> str:
    return f'"{name}"'  # ``user`` is a reserved word in PostgreSQL


class Ledger(Protocol):
    """Where rows are kept."""

    def write(self, rows: Sequence[LedgerRow]) -> None: ...

    def spend(
        self, *, user: str | None = None, team: str | None = None, since: float | None = None
    ) -> list[tuple[Any, ...]]:
        """Per user and team: requests, the four token counts, cost (largest cost first)."""
        ...

    def close(self) -> None: ...


def _spend_query(mark: str, user: str | None, team: str | None, since: float | None) -> Any:
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("user", user), ("team", team)):
        if value is not None:
            where.append(f"{_q(column)} = {mark}")
            args.append(value)
    if since is not None:
        where.append(f"at >= {mark}")
        args.append(since)
    sums = ", ".join(
        f"CAST(SUM({c}) AS BIGINT)"
        for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    )
    text = (
        f'SELECT "user", team, COUNT(*), {sums}, SUM(cost) FROM toolwire_ledger'
        + (" WHERE " + " AND ".join(where) if where else "")
        + ' GROUP BY "user", team ORDER BY SUM(cost) DESC, "user"'
    )
    return text, args


class SQLiteLedger:
    """The ledger in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        with self._lock:  # made once however many processes open it at once
            sqlite_schema(self._db, "ledger", [[_schema(_q)]])

    def write(self, rows: Sequence[LedgerRow]) -> None:
        marks = ", ".join("?" for _ in COLUMNS)
        names = ", ".join(_q(c) for c in COLUMNS)
        with self._lock, self._db:
            self._db.executemany(
                f"INSERT INTO toolwire_ledger ({names}) VALUES ({marks})",
                [astuple(r) for r in rows],
            )

    def spend(
        self, *, user: str | None = None, team: str | None = None, since: float | None = None
    ) -> list[tuple[Any, ...]]:
        text, args = _spend_query("?", user, team, since)
        with self._lock:
            return [tuple(r) for r in self._db.execute(text, args).fetchall()]

    def close(self) -> None:
        self._db.close()


class PostgresLedger:
    """The ledger in PostgreSQL (one connection; the writer thread is its only user on
    the request side)."""

    def __init__(self, url: str) -> None:
        try:
            psycopg: Any = importlib.import_module("psycopg")
        except ImportError:
            raise ConfigError(PG_MISSING) from None
        self._lock = threading.Lock()
        self._db = psycopg.connect(url, autocommit=True)
        with self._lock:  # made once however many replicas start at once
            postgres_schema(self._db, "ledger", [[_schema(_q)]])

    def write(self, rows: Sequence[LedgerRow]) -> None:
        marks = ", ".join("%s" for _ in COLUMNS)
        names = ", ".join(_q(c) for c in COLUMNS)
        with self._lock, self._db.transaction(), self._db.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO toolwire_ledger ({names}) VALUES ({marks})",
                [astuple(r) for r in rows],
            )

    def spend(
        self, *, user: str | None = None, team: str | None = None, since: float | None = None
    ) -> list[tuple[Any, ...]]:
        text, args = _spend_query("%s", user, team, since)
        with self._lock:
            return [tuple(r) for r in self._db.execute(text, args).fetchall()]

    def close(self) -> None:
        self._db.close()


def open_ledger(spec: str) -> Ledger:
    """A ``postgresql://`` URL or a SQLite file path."""
    if spec.startswith(PG_SCHEMES):
        return PostgresLedger(spec)
    return SQLiteLedger(spec)


Job = Callable[[], None]
_STOP = object()


class Writer:
    """One thread doing what must not hold a request: settling reservations (``Job``s)
    and writing ledger rows in batches, in the order they were queued."""

    def __init__(self, ledger: Ledger | None) -> None:
        self.ledger = ledger
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None  # started by the first item
        self._start = threading.Lock()

    def put(self, item: LedgerRow | Job) -> None:
        if self._thread is None:
            with self._start:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="toolwire-ledger", daemon=True
                    )
                    self._thread.start()
        self._queue.put(item)

    def close(self, timeout: float = 30.0) -> None:
        """Write everything queued, then stop (the proxy's shutdown)."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
        if self.ledger is not None:
            self.ledger.close()
            self.ledger = None

    def _run(self) -> None:
        stop = False
        while not stop:
            items = [self._queue.get()]
            while len(items) < BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows: list[LedgerRow] = []
            for item in items:
                if item is _STOP:
                    stop = True
                elif isinstance(item, LedgerRow):
                    rows.append(item)
                else:
                    self._do(item)  # type: ignore[arg-type]
            if rows and self.ledger is not None:
                self._do(partial(self.ledger.write, rows))

    @staticmethod
    def _do(job: Job) -> None:
        try:
            job()
        except Exception:
            # A database that is down must not stop later settlements: said, not raised.
            log.exception("toolwire proxy: a ledger write or settlement failed")


__all__ = [
    "COLUMNS",
    "Ledger",
    "LedgerRow",
    "PostgresLedger",
    "SQLiteLedger",
    "Writer",
    "open_ledger",
]

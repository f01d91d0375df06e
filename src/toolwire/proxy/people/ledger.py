"""The spend ledger: one row per request, written off the request path.

``[proxy] ledger`` is a SQLite file path (one machine) or a ``postgresql://`` URL (several
replicas, one database; the ``psycopg`` driver, imported only then). Rows go through
``writer.Writer``: a queue and one thread that writes them in batches, keeps them while
the database is down and writes them when it is back. A write fails in one of two ways:
``LedgerUnavailableError`` (the database cannot be reached: the rows wait) or any other
error (something in the rows: the writer tries them one by one). Rows are made
``storable`` before they are batched, so no value a client chose (a NUL in a model
name) makes the database refuse a batch.
Times are Unix seconds (``at``) in both engines, so ``spend --since`` compares numbers.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import math
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any, Protocol

from toolwire.config.schema import ConfigError
from toolwire.proxy.people.spending import (
    POSTGRES,
    SQLITE,
    Engine,
    Question,
    Spend,
    backfill,
    merged,
    queries,
    tables,
)
from toolwire.proxy.stores.schema import postgres_schema, sqlite_schema

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


class LedgerUnavailableError(Exception):
    """The ledger's database cannot be reached (down, restarting, locked, full): rows wait."""


COLUMNS = tuple(f.name for f in fields(LedgerRow))
TEXT_CAP = 1000  # characters of a text value kept: a model name is the client's to choose
_BIGINT = 2**63 - 1
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL, lone surrogates


def storable(row: LedgerRow) -> LedgerRow:
    """``row`` with values every engine takes: text without NUL or lone surrogates (made
    U+FFFD) and at most ``TEXT_CAP`` characters, integers within BIGINT, finite floats."""
    changes: dict[str, Any] = {}
    for name in COLUMNS:
        value = getattr(row, name)
        if isinstance(value, str):
            fixed: Any = _UNSTORABLE.sub("\ufffd", value[:TEXT_CAP])
        elif isinstance(value, float):
            fixed = value if math.isfinite(value) else 0.0
        elif isinstance(value, int):
            fixed = max(-_BIGINT, min(_BIGINT, value))
        else:
            fixed = str(value)
        if fixed is not value:
            changes[name] = fixed
    return replace(row, **changes) if changes else row


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

    def spend(self, question: Question) -> list[Spend]:
        """The spend ``question`` asks for, largest cost first (``spending.py``)."""
        ...

    def recent(self, count: int) -> list[LedgerRow]:
        """The last ``count`` rows, newest first."""
        ...

    def close(self) -> None: ...


def _steps(engine: Engine) -> list[list[str]]:
    """The ledger's schema: its table (with the day table, index and trigger, made again
    if missing at every start), then the day table filled once (``spending.py``)."""
    return [[_schema(_q), *tables(engine)], backfill(engine)]


def _insert(mark: str) -> str:
    marks = ", ".join(mark for _ in COLUMNS)
    return f"INSERT INTO toolwire_ledger ({', '.join(_q(c) for c in COLUMNS)}) VALUES ({marks})"


_RECENT = (
    f"SELECT {', '.join(_q(c) for c in COLUMNS)} FROM toolwire_ledger ORDER BY at DESC LIMIT %s"
)


class SQLiteLedger:
    """The ledger in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        with self._lock:  # made once however many processes open it at once
            sqlite_schema(self._db, "ledger", _steps(SQLITE))

    def write(self, rows: Sequence[LedgerRow]) -> None:
        with self._lock, _unavailable(sqlite3.OperationalError), self._db:
            self._db.executemany(_insert("?"), [astuple(r) for r in rows])

    def spend(self, question: Question) -> list[Spend]:
        with self._lock:
            found = [self._db.execute(t, a).fetchall() for t, a in queries(SQLITE, question)]
        return merged(question, (row for rows in found for row in rows))

    def recent(self, count: int) -> list[LedgerRow]:
        with self._lock:
            rows = self._db.execute(_RECENT.replace("%s", "?"), (count,)).fetchall()
        return [LedgerRow(*r) for r in rows]

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
            postgres_schema(self._db, "ledger", _steps(POSTGRES))

    def write(self, rows: Sequence[LedgerRow]) -> None:
        pg: Any = importlib.import_module("psycopg")  # loaded by __init__ already
        lost = _unavailable(pg.OperationalError, pg.InterfaceError)
        with self._lock, lost, self._db.transaction(), self._db.cursor() as cursor:
            cursor.executemany(_insert("%s"), [astuple(r) for r in rows])

    def spend(self, question: Question) -> list[Spend]:
        with self._lock:
            found = [self._db.execute(t, a).fetchall() for t, a in queries(POSTGRES, question)]
        return merged(question, (row for rows in found for row in rows))

    def recent(self, count: int) -> list[LedgerRow]:
        with self._lock:
            rows = self._db.execute(_RECENT, (count,)).fetchall()
        return [LedgerRow(*r) for r in rows]

    def close(self) -> None:
        self._db.close()


@contextlib.contextmanager
def _unavailable(*lost: type[BaseException]) -> Iterator[None]:
    """``lost`` (the engine's connection errors) raised as ``LedgerUnavailableError``."""
    try:
        yield
    except lost as e:
        raise LedgerUnavailableError(str(e).strip() or type(e).__name__) from e


def check_ledger(spec: str) -> None:
    """``ConfigError`` now if ``spec`` needs a driver that is not installed (opening the
    ledger itself may wait for its database: the writer does that)."""
    if spec.startswith(PG_SCHEMES) and importlib.util.find_spec("psycopg") is None:
        raise ConfigError(PG_MISSING)


# libpq settings a ledger URL gets unless it sets them: a database that stops answering
# (a partition, not a refusal) is given up on in about a minute, and the writer's
# backoff takes over, instead of a write waiting for TCP's two hours.
PG_TIMEOUTS = {"connect_timeout": "10", "keepalives_idle": "30", "keepalives_interval": "10",
               "keepalives_count": "3"}  # fmt: skip


def with_timeouts(url: str) -> str:
    """``url`` with ``PG_TIMEOUTS`` for the parameters it does not set."""
    missing = [f"{k}={v}" for k, v in PG_TIMEOUTS.items() if f"{k}=" not in url]
    if not missing:
        return url
    return url + ("&" if "?" in url else "?") + "&".join(missing)


def open_ledger(spec: str) -> Ledger:
    """A ``postgresql://`` URL or a SQLite file path."""
    if spec.startswith(PG_SCHEMES):
        return PostgresLedger(with_timeouts(spec))
    return SQLiteLedger(spec)


__all__ = [
    "COLUMNS",
    "Ledger",
    "LedgerRow",
    "LedgerUnavailableError",
    "PostgresLedger",
    "SQLiteLedger",
    "check_ledger",
    "open_ledger",
    "storable",
]

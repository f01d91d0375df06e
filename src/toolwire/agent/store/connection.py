"""One SQLite connection of the session store: opened, in transactions, its errors told.

One connection per store, WAL, foreign keys on; use a store from the thread that opened
it (the agent's: ``worker``, off the event loop). Schema and file: ``schema``.

Every text it writes is encodable (``toolwire.backends.encodable``: a lone surrogate
from a prompt becomes U+FFFD; the JSON columns keep it escaped), so nothing a client or
a model sends can make a write, or a later read, fail. SQLite's own failures leave as
one ``StoreError`` line saying what happened ("locked by another process", "the disk
... is full"), never "cannot rollback".
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import update_wrapper
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from toolwire.agent.store.schema import (
    default_db_path,
    migrate,
    prepare_file,
    rollback,
    store_error,
)
from toolwire.backends import encodable

_C = TypeVar("_C", bound="Connection")
_P = ParamSpec("_P")
_R = TypeVar("_R")
BUSY_TIMEOUT_S = 5.0  # how long a write waits for another process's lock


def sqlite_errors(
    method: Callable[Concatenate[_C, _P], _R],
) -> Callable[Concatenate[_C, _P], _R]:
    """Let SQLite's errors out of ``method`` as one clear ``StoreError`` line."""

    def translated(self: _C, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, self.busy_timeout) from exc

    update_wrapper(translated, method)  # its name and docstring
    return translated


class Connection:
    """The store's SQLite connection: opened with its pragmas and migrated.

    ``path=None`` is ``default_db_path()``; ``":memory:"`` works. ``busy_timeout``: the
    seconds a write waits for another process's lock before it fails (``StoreError``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = str(default_db_path() if path is None else path)
        self.busy_timeout = busy_timeout
        if self.path != ":memory:":
            prepare_file(Path(self.path))
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, busy_timeout) from exc
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute("PRAGMA synchronous = NORMAL")
            migrate(self._db)
        except sqlite3.Error as exc:
            self._db.close()
            raise store_error(exc, self.path, busy_timeout) from exc
        except BaseException:
            self._db.close()
            raise

    @property
    @sqlite_errors
    def schema_version(self) -> int:
        """The schema version of the open database (``SCHEMA_VERSION`` once open)."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; the store's modules (``database``, ``prompt_index``)
        compose their statements in it."""
        # IMMEDIATE takes the write lock at once: the MAX(seq) read and the inserts that
        # follow it cannot interleave with another writer's.
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
                raise
        except sqlite3.Error as exc:
            raise store_error(exc, self.path, self.busy_timeout) from exc

    def sql(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """``execute`` with every text parameter made encodable (module doc)."""
        return self._db.execute(sql, encodable_row(params))

    def insert(
        self, table: str, columns: str, session_id: str, rows: list[tuple[Any, ...]]
    ) -> None:
        """Append ``rows`` to a per-session table, numbered after its last ``seq``."""
        if not rows:
            return
        (last,) = self.sql(
            f"SELECT COALESCE(MAX(seq), -1) FROM {table} WHERE session_id = ?", (session_id,)
        ).fetchone()
        marks = ", ".join("?" * (len(rows[0]) + 2))
        self._db.executemany(
            f"INSERT INTO {table} (session_id, seq, {columns}) VALUES ({marks})",
            [encodable_row((session_id, last + 1 + i, *row)) for i, row in enumerate(rows)],
        )


def encodable_row(params: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(encodable(p) if isinstance(p, str) else p for p in params)


__all__ = ["BUSY_TIMEOUT_S", "Connection", "encodable_row", "sqlite_errors"]

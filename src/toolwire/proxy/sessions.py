"""Session identity and the session store: which backend a session uses, and its switches.

Claude Code resends the whole history on every request, so the proxy keeps what the
history cannot say: the backend a session was switched to from outside, and the switch
points (the number of assistant turns when the backend changed). ``MemoryStore`` is the
default; ``SQLiteStore`` keeps the same state in a file, so a restarted proxy (or a
``--resume``d Claude Code session) finds it again; ``RedisStore`` (``redis_store.py``)
shares it between several proxy processes or hosts.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

IMPLICIT_SESSION = "default"
SESSION_HEADERS = ("x-claude-code-session-id", "x-toolwire-session")
_LEGACY = re.compile(r"_session_([0-9A-Za-z-]+)$")
# Provenance keys kept per session (a few per assistant turn): the oldest go first, and
# a turn older than that only loses its thinking, never its text or tool calls.
MAX_PRODUCED = 4096
_T = TypeVar("_T")


def session_id(body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    """The session of a request: ``metadata.user_id``, else a header, else the implicit one.

    Current Claude Code sends ``user_id`` as a JSON string holding ``session_id``; older
    versions end it with ``_session_<uuid>``.
    """
    metadata = body.get("metadata")
    user_id = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(user_id, str) and user_id:
        try:
            parsed = json.loads(user_id)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("session_id"), str):
            return str(parsed["session_id"])
        legacy = _LEGACY.search(user_id)
        if legacy:
            return legacy.group(1)
    for name in SESSION_HEADERS:
        if headers.get(name):
            return headers[name]
    return IMPLICIT_SESSION


@dataclass(slots=True)
class SessionState:
    """A session's routing state.

    ``forced``: the backend set by ``proxy switch``; ``switches``: (switch point, backend)
    pairs, the switch point being the length of the neutral history when it happened;
    ``summaries``: the handoff summary computed for each switch point (computed once);
    ``produced``: provenance key -> the backend that produced that assistant turn
    (``provenance.py``), oldest first.
    """

    forced: str | None = None
    last_backend: str | None = None
    switches: list[tuple[int, str]] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)
    produced: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        data = {
            "forced": self.forced,
            "last": self.last_backend,
            "switches": self.switches,
            "summaries": self.summaries,
            "produced": self.produced,
        }
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> SessionState:
        data = json.loads(text)
        switches = [(int(at), str(name)) for at, name in data.get("switches", [])]
        summaries = {str(k): str(v) for k, v in data.get("summaries", {}).items()}
        produced = {str(k): str(v) for k, v in data.get("produced", {}).items()}
        return cls(data.get("forced"), data.get("last"), switches, summaries, produced)

    def remember(self, keys: list[str], backend: str) -> None:
        """Record that ``backend`` produced the turn with these provenance ``keys``."""
        for key in keys:
            self.produced.pop(key, None)  # re-inserted: it is the newest again
            self.produced[key] = backend
        while len(self.produced) > MAX_PRODUCED:
            del self.produced[next(iter(self.produced))]

    def record(self, backend: str, position: int) -> bool:
        """Note that a request whose history has ``position`` messages went to ``backend``.

        Returns True when that is a switch (a different backend than last time).
        """
        switched = self.last_backend is not None and self.last_backend != backend
        if switched:
            self.switches.append((position, backend))
        self.last_backend = backend
        return switched


class SessionStore(Protocol):
    """Where session state lives; every implementation has these two methods."""

    def load(self, session: str) -> SessionState:
        """The session's state (a fresh one for an unknown session)."""
        ...

    def save(self, session: str, state: SessionState) -> None:
        """Persist the session's state."""
        ...

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        """Load, ``change`` in place, save, atomically; ``change``'s result.

        ``change`` may run more than once (a store retries when another writer got in
        between), so it must only compute from the state it is given.
        """
        ...


class MemoryStore:
    """Session state in this process only (the default)."""

    def __init__(self) -> None:
        self._states: dict[str, str] = {}
        self._lock = threading.Lock()  # requests are planned in worker threads

    def load(self, session: str) -> SessionState:
        text = self._states.get(session)
        return SessionState.from_json(text) if text else SessionState()

    def save(self, session: str, state: SessionState) -> None:
        self._states[session] = state.to_json()

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        with self._lock:
            state = self.load(session)
            result = change(state)
            self.save(session, state)
            return result


class SQLiteStore:
    """Session state in a SQLite file (one JSON row per session)."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        # Autocommit: each statement is its own transaction, ``update`` opens one explicitly.
        self._db = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=30
        )
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, state TEXT NOT NULL)"
            )

    def load(self, session: str) -> SessionState:
        with self._lock:
            row = self._db.execute("SELECT state FROM sessions WHERE id = ?", (session,)).fetchone()
        return SessionState.from_json(row[0]) if row else SessionState()

    def save(self, session: str, state: SessionState) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO sessions (id, state) VALUES (?, ?) "
                "ON CONFLICT(id) DO UPDATE SET state = excluded.state",
                (session, state.to_json()),
            )

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        # BEGIN IMMEDIATE takes the file's write lock before reading, so another proxy
        # process sharing the file waits instead of overwriting this change.
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT state FROM sessions WHERE id = ?", (session,)
                ).fetchone()
                state = SessionState.from_json(row[0]) if row else SessionState()
                result = change(state)
                self._db.execute(
                    "INSERT INTO sessions (id, state) VALUES (?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET state = excluded.state",
                    (session, state.to_json()),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def close(self) -> None:
        self._db.close()


def open_store(spec: str, ttl: int | None = None) -> SessionStore:
    """``memory``, a ``redis://`` URL (``ttl``: seconds), or the path of a SQLite file."""
    if spec == "memory":
        return MemoryStore()
    # Imported here: redis_store imports this module (it imports redis itself only lazily).
    from toolwire.proxy.stores.redis import RedisStore, is_redis_url

    return RedisStore(spec, ttl=ttl) if is_redis_url(spec) else SQLiteStore(spec)


__all__ = [
    "IMPLICIT_SESSION",
    "MAX_PRODUCED",
    "MemoryStore",
    "SQLiteStore",
    "SessionState",
    "SessionStore",
    "open_store",
    "session_id",
]

"""Where the proxy keeps session state: the ``ProxyStore`` protocol and ``open_store``.

``memory`` (``MemoryStore``, the default) keeps it in this process; a file path
(``SQLiteStore``) keeps it across restarts, so a restarted proxy or a ``--resume``d
Claude Code session finds it again; a ``redis://`` URL (``RedisStore``) shares it between
several proxy processes or hosts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from toolwire.proxy.state import SessionState
from toolwire.proxy.stores.memory import MemoryStore
from toolwire.proxy.stores.redis import RedisStore, is_redis_url
from toolwire.proxy.stores.sqlite import SQLiteStore

_T = TypeVar("_T")


class ProxyStore(Protocol):
    """Where session state lives; every implementation has these methods."""

    blocking: bool
    """Whether a call may wait (a file lock, a network round trip): the proxy then runs it
    in a worker thread. A non-blocking store's calls are CPU work and run on the loop."""

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


def open_store(spec: str, ttl: int | None = None) -> ProxyStore:
    """``memory``, a ``redis://`` URL (``ttl``: seconds), or the path of a SQLite file."""
    if spec == "memory":
        return MemoryStore()
    if not is_redis_url(spec):
        return SQLiteStore(spec)
    store = RedisStore(spec, ttl=ttl)
    store.prepare()
    return store


__all__ = ["MemoryStore", "ProxyStore", "RedisStore", "SQLiteStore", "open_store"]

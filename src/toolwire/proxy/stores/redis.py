"""The proxy's session store in Redis, shared by several proxy processes or hosts.

``store = "redis://host:6379/0"`` in ``[proxy]``: every proxy behind a load balancer
that points at the same Redis sees the same sessions, so a switch made through one is
routed and rewritten the same way by all of them. One key per session,
``toolwire:proxy:session:<id>``, holding the state's JSON (the format ``SQLiteStore``
keeps); ``ttl`` (seconds) makes an untouched session expire, each save renewing it.

``load`` and ``save`` are one command each. ``update`` is the atomic read-modify-write
(``WATCH``/``MULTI``, retried when another process wrote the key in between).

The ``redis`` package is optional (``pip install 'toolwire[redis]'``) and imported only
when a Redis store is opened.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from toolwire.config.schema import ConfigError
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores.schema import redis_schema

if TYPE_CHECKING:
    import redis

KEY_PREFIX = "toolwire:proxy:session:"
REDIS_SCHEMES = ("redis://", "rediss://")
MISSING = "the Redis store needs the redis package: pip install 'toolwire[redis]'"
_T = TypeVar("_T")
log = logging.getLogger(__name__)


def _keys_made_by_their_first_write(client: Any) -> None:
    """Version 1 of the Redis keys: nothing to make (a later version's step changes them)."""


REDIS_STEPS = (_keys_made_by_their_first_write,)


def is_redis_url(spec: str) -> bool:
    """Whether a ``[proxy] store`` value names a Redis server."""
    return spec.startswith(REDIS_SCHEMES)


def require_redis() -> ModuleType:
    """The ``redis`` module, or a ``ConfigError`` saying how to install it."""
    try:
        return importlib.import_module("redis")
    except ImportError:
        raise ConfigError(MISSING) from None


class RedisStore:
    """Session state in Redis: one JSON string per session under ``toolwire:proxy:session:``."""

    blocking = True  # every call is a network round trip

    def __init__(
        self,
        url: str,
        *,
        ttl: int | None = None,
        prefix: str = KEY_PREFIX,
        client: redis.Redis | None = None,
    ) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError("ttl must be a positive number of seconds (or None)")
        if client is None:
            module: Any = require_redis()
            client = module.Redis.from_url(url)
        self._redis: redis.Redis = client
        self._ttl = ttl
        self._prefix = prefix

    def key(self, session: str) -> str:
        """The Redis key of a session."""
        return self._prefix + session

    def load(self, session: str) -> SessionState:
        raw = self._redis.get(self.key(session))
        return _decode(raw)

    def save(self, session: str, state: SessionState) -> None:
        self._redis.set(self.key(session), state.to_json(), ex=self._ttl)

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        """Load, ``change`` in place, save: atomically, even across processes.

        When another client writes the session between the read and the write, the
        transaction is dropped and ``change`` runs again on the fresh state; its result
        is that of the run that was saved.
        """
        module: Any = require_redis()
        key = self.key(session)
        with self._redis.pipeline() as transaction:
            pipe: Any = transaction  # redis-py leaves ``watch`` unannotated
            while True:
                try:
                    pipe.watch(key)
                    state = _decode(pipe.get(key))
                    result = change(state)
                    pipe.multi()
                    pipe.set(key, state.to_json(), ex=self._ttl)
                    pipe.execute()
                    return result
                except module.WatchError:
                    continue

    def prepare(self) -> None:
        """The keys' version checked once per start, under the replicas' guard
        (``schema.py``); a Redis not reachable yet is left to the first request."""
        module: Any = require_redis()
        try:
            redis_schema(self._redis, "proxy", REDIS_STEPS)
        except module.ConnectionError as e:
            log.warning("toolwire proxy: Redis not reachable at start (%s)", e)

    def close(self) -> None:
        self._redis.close()


def _decode(raw: object) -> SessionState:
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    return SessionState.from_json(raw) if isinstance(raw, str) and raw else SessionState()


__all__ = ["KEY_PREFIX", "MISSING", "RedisStore", "is_redis_url", "require_redis"]

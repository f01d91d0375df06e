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

Redis Cluster: ``redis-cluster://host:port[,host:port...]`` (``rediss-cluster://`` with
TLS) names some of its nodes; redis-py's cluster client finds the rest (``connect``).
Every command of the proxy touches one key, or keys sharing a hash tag (``{...}``: one
person's, team's or client key's counters in one slot); a check over several subjects'
counters runs per slot (``slot_groups``).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from toolwire.config.schema import ConfigError
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores.schema import redis_schema

if TYPE_CHECKING:
    import redis

KEY_PREFIX = "toolwire:proxy:session:"
CLUSTER_SCHEMES = ("redis-cluster://", "rediss-cluster://")
REDIS_SCHEMES = ("redis://", "rediss://", *CLUSTER_SCHEMES)
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


def connect(url: str) -> Any:
    """A client of the Redis server, or of the Redis Cluster, ``url`` names."""
    module: Any = require_redis()
    if not url.startswith(CLUSTER_SCHEMES):
        return module.Redis.from_url(url)
    from redis.cluster import ClusterNode, RedisCluster

    scheme, _, rest = url.partition("://")
    auth, _, hosts = rest.rpartition("@")
    hosts = hosts.split("/", 1)[0].split("?", 1)[0]
    nodes = []
    for host in hosts.split(","):
        name, _, port = host.strip().rpartition(":")
        if not name or not port.isdigit():
            raise ConfigError(f"{scheme}://: write each node as host:port, got {host!r}")
        nodes.append(ClusterNode(name, int(port)))  # type: ignore[no-untyped-call]
    user, _, password = auth.partition(":") if auth else ("", "", "")
    return RedisCluster(
        startup_nodes=nodes,
        username=unquote(user) or None,
        password=unquote(password) or None,
        ssl=scheme == "rediss-cluster",
    )


def is_cluster(client: Any) -> bool:
    """Whether ``client`` talks to a Redis Cluster (keys in several slots, several nodes)."""
    return hasattr(client, "keyslot")


def tagged(counter: str) -> str:
    """``SUBJECT:LAST`` (``user:alice:requests``, ``team:eng:41``) as ``{SUBJECT}:LAST``: a
    subject's counters share a hash slot, so a script may touch them together."""
    subject, _, last = counter.rpartition(":")
    return f"{{{subject}}}:{last}" if subject else counter


def slot_groups(client: Any, keys: Sequence[str]) -> list[list[int]]:
    """The indices of ``keys`` grouped by hash slot, in a fixed order: one group on a
    single server, where any keys may go in one script."""
    if not is_cluster(client):
        return [list(range(len(keys)))]
    groups: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(int(client.keyslot(key)), []).append(i)
    return [groups[slot] for slot in sorted(groups)]


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
            client = connect(url)
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
        with self._redis.pipeline(transaction=True) as transaction:
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


__all__ = [
    "KEY_PREFIX",
    "MISSING",
    "RedisStore",
    "connect",
    "is_cluster",
    "is_redis_url",
    "require_redis",
    "slot_groups",
    "tagged",
]

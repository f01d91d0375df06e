"""Keys, budgets and spend counters in Redis, shared by every proxy on it.

Keys: the hash ``toolwire:proxy:keys`` (digest -> record JSON) and ``toolwire:proxy:key-ids``
(id -> digest); budgets: the hash ``toolwire:proxy:budgets`` (subject -> JSON); counters:
``toolwire:proxy:spent:SUBJECT:WINDOW``, integers of micro-dollars that expire after their
window. A reservation is one Lua script (``_RESERVE``): Redis runs a script alone, so
no other replica's reservation can read a counter between this one's check and its
increment, which ``WATCH``/``MULTI`` would only give with retries under contention.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolwire.proxy.people.keys import Budget, Charge, KeyRecord, Refused
from toolwire.proxy.stores.redis import require_redis

if TYPE_CHECKING:
    import redis

PREFIX = "toolwire:proxy:"
# KEYS: the counters; ARGV: limit, amount, ttl for each. Returns 0 when every counter had
# room (and all were charged), else the 1-based index of the first that had not and what
# it held.
_RESERVE = """
for i = 1, #KEYS do
  local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
  if spent + tonumber(ARGV[3 * i - 1]) > tonumber(ARGV[3 * i - 2]) then
    return {i, spent}
  end
end
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[3 * i - 1])
  redis.call('EXPIRE', KEYS[i], ARGV[3 * i])
end
return {0, 0}
"""


class RedisAccounts:
    """``Accounts`` on a Redis server (see the module doc for the keys it writes)."""

    blocking = True

    def __init__(self, url: str, *, client: redis.Redis | None = None) -> None:
        if client is None:
            module: Any = require_redis()
            client = module.Redis.from_url(url)
        self._redis: Any = client
        self._reserve = self._redis.register_script(_RESERVE)

    def add(self, record: KeyRecord) -> None:
        with self._redis.pipeline() as pipe:
            pipe.hset(PREFIX + "keys", record.digest, record.to_json())
            pipe.hset(PREFIX + "key-ids", record.id, record.digest)
            pipe.execute()

    def records(self) -> list[KeyRecord]:
        rows = self._redis.hvals(PREFIX + "keys")
        return sorted((KeyRecord.from_json(r) for r in rows), key=lambda r: r.created)

    def revoke(self, key_id: str) -> bool:
        found = self._redis.hget(PREFIX + "key-ids", key_id)
        record = self.find(found.decode()) if found else None
        if record is None:
            return False
        self._redis.hset(PREFIX + "keys", record.digest, replace(record, revoked=True).to_json())
        return True

    def find(self, digest: str) -> KeyRecord | None:
        raw = self._redis.hget(PREFIX + "keys", digest)
        return KeyRecord.from_json(raw) if raw else None

    def any_key(self) -> bool:
        return bool(self._redis.hlen(PREFIX + "keys"))

    def set_budget(self, subject: str, budget: Budget) -> None:
        self._redis.hset(PREFIX + "budgets", subject, budget.to_json())

    def budgets(self, subjects: Iterable[str]) -> dict[str, Budget]:
        names = list(subjects)
        if not names:
            return {}
        raw = self._redis.hmget(PREFIX + "budgets", names)
        return {n: Budget.from_json(r) for n, r in zip(names, raw, strict=True) if r}

    def reserve(self, charges: Sequence[Charge]) -> Refused | None:
        if not charges:
            return None
        args: list[int] = []
        for c in charges:
            args += [c.limit, c.amount, c.ttl]
        index, spent = self._reserve(keys=[self._counter(c) for c in charges], args=args)
        return None if int(index) == 0 else Refused(charges[int(index) - 1], int(spent))

    def settle(self, charges: Sequence[Charge]) -> None:
        with self._redis.pipeline(transaction=False) as pipe:
            for c in charges:
                pipe.incrby(self._counter(c), c.amount)
                pipe.expire(self._counter(c), c.ttl)
            pipe.execute()

    def spent(self, counter: str) -> int:
        raw = self._redis.get(PREFIX + "spent:" + counter)
        return int(raw) if raw else 0

    def _counter(self, charge: Charge) -> str:
        return PREFIX + "spent:" + charge.counter

    def close(self) -> None:
        self._redis.close()


__all__ = ["RedisAccounts"]

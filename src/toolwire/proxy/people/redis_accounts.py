"""Keys, budgets and spend counters in Redis, shared by every proxy on it.

Keys: the hash ``toolwire:proxy:keys`` (digest -> record JSON) and ``toolwire:proxy:key-ids``
(id -> digest); budgets: the hash ``toolwire:proxy:budgets`` (subject -> JSON); counters:
``toolwire:proxy:spent:{SUBJECT}:WINDOW``, integers of micro-dollars that expire after their
window (the hash tag keeps a subject's counters in one Redis Cluster slot; counters of
an older version, without it, are moved once when a proxy opens a single server). A
reservation is one Lua script (``_RESERVE``): Redis runs a script alone, so no other
replica's reservation can read a counter between this one's check and its increment,
which ``WATCH``/``MULTI`` would only give with retries under contention. On a cluster
the user's and the team's counters sit in two slots: the script runs per slot, and a
refusal gives back what the earlier slot took (a concurrent request may be refused
meanwhile, never admitted over a budget). ``now`` is the server's ``TIME`` (on a cluster,
one node's, the same for every replica): budget windows never follow a replica's clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolwire.proxy.people.keys import Budget, Charge, KeyRecord, Refused
from toolwire.proxy.stores.redis import connect, is_cluster, slot_groups, tagged

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
# KEYS: a counter named before hash tags, its name now. Moves its amount and expiry.
_MOVE = """
local v = redis.call('GET', KEYS[1])
if v then
  local ttl = redis.call('TTL', KEYS[1])
  redis.call('INCRBY', KEYS[2], v)
  if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
  redis.call('DEL', KEYS[1])
end
return 0
"""
MOVED = PREFIX + "spent-tagged"  # set once the untagged counters were moved
CLOCK = PREFIX + "clock"  # the key whose node tells the time on a cluster


class RedisAccounts:
    """``Accounts`` on a Redis server (see the module doc for the keys it writes)."""

    blocking = True

    def __init__(self, url: str, *, client: redis.Redis | None = None) -> None:
        if client is None:
            client = connect(url)
        self._redis: Any = client
        self._cluster = is_cluster(client)
        self._reserve = self._redis.register_script(_RESERVE)
        if not self._cluster:
            self._move_untagged()

    def _move_untagged(self) -> None:
        """Counters an older version named ``spent:SUBJECT:WINDOW`` moved to their tagged
        names, once (a budget's spend must survive the upgrade)."""
        if self._redis.exists(MOVED):
            return
        move = self._redis.register_script(_MOVE)
        for raw in self._redis.scan_iter(PREFIX + "spent:*", count=1000):
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            counter = name.removeprefix(PREFIX + "spent:")
            if not counter.startswith("{"):
                move(keys=[name, PREFIX + "spent:" + tagged(counter)])
        self._redis.set(MOVED, "1")

    def now(self) -> float:
        """The store's clock (see the module doc)."""
        node = self._redis.get_node_from_key(CLOCK) if self._cluster else None
        seconds, micros = self._redis.time(**({"target_nodes": node} if node else {}))
        return int(seconds) + int(micros) / 1e6

    def add(self, record: KeyRecord) -> None:
        # Two hashes in two slots on a cluster: not one transaction there.
        with self._redis.pipeline(transaction=not self._cluster) as pipe:
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

    def update(self, record: KeyRecord) -> None:
        self._redis.hset(PREFIX + "keys", record.digest, record.to_json())

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
        keys = [self._counter(c) for c in charges]
        taken: list[Charge] = []  # given back if a later slot refuses
        for group in slot_groups(self._redis, keys):
            args: list[int] = []
            for i in group:
                args += [charges[i].limit, charges[i].amount, charges[i].ttl]
            index, spent = self._reserve(keys=[keys[i] for i in group], args=args)
            if int(index) != 0:
                if taken:
                    self.settle([Charge(c.counter, c.limit, -c.amount, c.ttl) for c in taken])
                return Refused(charges[group[int(index) - 1]], int(spent))
            taken += [charges[i] for i in group]
        return None

    def settle(self, charges: Sequence[Charge]) -> None:
        with self._redis.pipeline(transaction=False) as pipe:
            for c in charges:
                pipe.incrby(self._counter(c), c.amount)
                pipe.expire(self._counter(c), c.ttl)
            pipe.execute()

    def spent(self, counter: str) -> int:
        raw = self._redis.get(PREFIX + "spent:" + tagged(counter))
        return int(raw) if raw else 0

    def _counter(self, charge: Charge) -> str:
        return PREFIX + "spent:" + tagged(charge.counter)

    def close(self) -> None:
        self._redis.close()


__all__ = ["RedisAccounts"]

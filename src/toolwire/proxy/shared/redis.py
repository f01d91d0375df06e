"""The shared state in Redis: every replica on one server (``[proxy] store = "redis://..."``).

Counters: one key per counter and minute, ``toolwire:proxy:limit:{SUBJECT}:KIND:MINUTE``
(``{key:ID}``, ``{user:NAME}``, ``{team:NAME}``: a hash tag, so one subject's counters
share a Redis Cluster slot), ``INCRBY`` with an expiry, checked and added by one Lua
script (atomic: no replica sees room another already took), on the server's clock
(``TIME``), so replicas whose clocks differ still share one window. On a cluster the
subjects' counters live in several slots: the script runs per slot, and when a later
slot refuses, what the earlier ones took is given back (a concurrent request may be
refused meanwhile, never admitted past a limit). Cooldowns: one
hash, read whole (a few fields: one per backend and pool key). Pins: one key each, with
an expiry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire.proxy.shared.types import Charge, Cooling
from toolwire.proxy.stores.redis import connect, slot_groups, tagged

if TYPE_CHECKING:
    import redis

PREFIX = "toolwire:proxy:"
COOLDOWNS = PREFIX + "cooldowns"
# KEYS: the counters; ARGV: the window's seconds, then limit and amount per counter.
# Returns {1, window} when admitted, else {0, the milliseconds until the window ends}.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local w = tonumber(ARGV[1])
local win = math.floor(now / w)
local names, counts = {}, {}
for i, k in ipairs(KEYS) do
  names[i] = k .. ':' .. win
  counts[i] = tonumber(redis.call('GET', names[i]) or '0')
  local limit, amount = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  if counts[i] > 0 and counts[i] + amount > limit then
    return {0, math.ceil(((win + 1) * w - now) * 1000)}
  end
end
for i, k in ipairs(KEYS) do
  redis.call('INCRBY', names[i], tonumber(ARGV[2 * i + 1]))
  redis.call('EXPIRE', names[i], 2 * w)
end
return {1, win}
"""


class RedisShared:
    """Counters, cooldowns and pins in Redis under ``toolwire:proxy:``."""

    blocking = True  # every call is a network round trip

    def __init__(self, url: str, *, client: redis.Redis | None = None) -> None:
        if client is None:
            client = connect(url)
        self._redis: redis.Redis = client
        self._take: Any = self._redis.register_script(_TAKE)

    def take(self, charges: Sequence[Charge], window: int) -> float | None:
        keys = [PREFIX + "limit:" + tagged(c.counter) for c in charges]
        taken: list[tuple[int, str]] = []  # (charge, counter key) to give back on a refusal
        for group in slot_groups(self._redis, keys):
            args: list[int] = [window]
            for i in group:
                args += [charges[i].limit, charges[i].amount]
            admitted, value = self._take(keys=[keys[i] for i in group], args=args)
            if not int(admitted):
                self._give_back(charges, taken)
                return int(value) / 1000
            taken += [(i, f"{keys[i]}:{int(value)}") for i in group]
        return None

    def _give_back(self, charges: Sequence[Charge], taken: list[tuple[int, str]]) -> None:
        if taken:
            with self._redis.pipeline(transaction=False) as pipe:
                for i, key in taken:
                    pipe.decrby(key, charges[i].amount)
                pipe.execute()

    def cooled(self) -> Mapping[str, Cooling]:
        raw: Any = self._redis.hgetall(COOLDOWNS)
        return {_text(k): Cooling.from_text(_text(v)) for k, v in raw.items()}

    def cool(self, name: str, entry: Cooling) -> None:
        self._redis.hset(COOLDOWNS, name, entry.to_text())

    def warm(self, name: str) -> None:
        self._redis.hdel(COOLDOWNS, name)

    def pinned(self, key: str) -> str | None:
        raw = self._redis.get(PREFIX + "pin:" + key)
        return None if raw is None else _text(raw)

    def pin(self, key: str, value: str, ttl: int) -> None:
        self._redis.set(PREFIX + "pin:" + key, value, ex=ttl)

    def close(self) -> None:
        self._redis.close()


def _text(raw: object) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


__all__ = ["COOLDOWNS", "PREFIX", "RedisShared"]

"""The shared state in Redis: every replica on one server (``[proxy] store = "redis://..."``).

Counters: one key per counter and minute, ``INCRBY`` with an expiry, checked and added
by one Lua script (atomic: no replica sees room another already took), on the server's
clock (``TIME``), so replicas whose clocks differ still share one window. Cooldowns: one
hash, read whole (a few fields: one per backend and pool key). Pins: one key each, with
an expiry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire.proxy.shared.types import Charge, Cooling
from toolwire.proxy.stores.redis import require_redis

if TYPE_CHECKING:
    import redis

PREFIX = "toolwire:proxy:"
COOLDOWNS = PREFIX + "cooldowns"
# KEYS: the counters; ARGV: the window's seconds, then limit and amount per counter.
# Returns -1 when admitted, else the milliseconds until the window ends.
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
    return math.ceil(((win + 1) * w - now) * 1000)
  end
end
for i, k in ipairs(KEYS) do
  redis.call('INCRBY', names[i], tonumber(ARGV[2 * i + 1]))
  redis.call('EXPIRE', names[i], 2 * w)
end
return -1
"""


class RedisShared:
    """Counters, cooldowns and pins in Redis under ``toolwire:proxy:``."""

    blocking = True  # every call is a network round trip

    def __init__(self, url: str, *, client: redis.Redis | None = None) -> None:
        if client is None:
            module: Any = require_redis()
            client = module.Redis.from_url(url)
        self._redis: redis.Redis = client
        self._take: Any = self._redis.register_script(_TAKE)

    def take(self, charges: Sequence[Charge], window: int) -> float | None:
        keys = [PREFIX + "limit:" + c.counter for c in charges]
        args: list[int] = [window]
        for charge in charges:
            args += [charge.limit, charge.amount]
        waited = int(self._take(keys=keys, args=args))
        return None if waited < 0 else waited / 1000

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

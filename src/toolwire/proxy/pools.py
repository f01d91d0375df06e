"""Pools of upstream keys (``api_key_envs`` on a backend; docs/proxy.md, "Key pools").

A session sticks to one key so the provider's prompt cache keeps hitting: the first
choice is by rendezvous hashing of the session id over the keys not cooling (every
replica chooses the same key, and removing a key moves only its sessions), and it is
pinned in the shared state, so when a key cools down (it answered 429: ``retry-after``)
its sessions move and stay on their new key after it is back. Keys are named by their
variable here and everywhere: the value never leaves ``make_backend``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence

from toolwire.proxy.cooling import SharedCooldowns
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.plan import Plan
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.shared import PIN_TTL, SharedState
from toolwire.proxy.upstream import Opened

Open = Callable[[Plan], Awaitable[tuple[Plan, Opened]]]
Replan = Callable[[Plan], Awaitable[Plan]]


def key_name(backend: str, env: str) -> str:
    """The cooldown entry of ``backend``'s key in variable ``env``."""
    return f"key:{backend}:{env}"


def choose(
    pool: Sequence[str], session: str, pinned: str | None, cooling: Callable[[str], bool]
) -> str:
    """The key of ``session``: its pinned one while that is in the pool and not cooling,
    else the ready key of highest rendezvous score (all keys when none is ready)."""
    ready = [k for k in pool if not cooling(k)]
    if pinned is not None and pinned in pool and (pinned in ready or not ready):
        return pinned
    return max(ready or pool, key=lambda k: _score(session, k))


def _score(session: str, env: str) -> bytes:
    return hashlib.sha256(f"{session}\0{env}".encode()).digest()


class KeyPools:
    """The key choice of each request, read from and pinned in ``shared``."""

    def __init__(
        self, settings: ProxySettings, shared: SharedState, cooldowns: SharedCooldowns
    ) -> None:
        self._pools = {n: b.api_key_envs for n, b in settings.config.backends.items()}
        self._shared = shared
        self._cooldowns = cooldowns

    def pool(self, backend: str) -> list[str]:
        """``backend``'s key variables (empty: it has one key, ``api_key_env``)."""
        return self._pools.get(backend, [])

    def ready(self, backend: str) -> bool:
        """Whether a key of ``backend``'s pool is not cooling."""
        return any(not self._cooling(backend, k) for k in self.pool(backend))

    def choose(self, backend: str, session: str) -> str | None:
        """The variable of the key ``session`` uses on ``backend`` (None: no pool).
        Blocking with a Redis or SQLite state: call it where the plan runs."""
        pool = self.pool(backend)
        if not pool:
            return None
        where = f"{backend}:{session}"
        pinned = self._shared.pinned(where)
        chosen = choose(pool, session, pinned, lambda k: self._cooling(backend, k))
        if chosen != pinned:
            self._shared.pin(where, chosen, PIN_TTL)
        return chosen

    def cool(self, backend: str, env: str, seconds: float) -> None:
        """``backend``'s key in ``env`` answered 429: skip it for ``seconds``."""
        self._cooldowns.hold(key_name(backend, env), seconds)

    def _cooling(self, backend: str, env: str) -> bool:
        return self._cooldowns.cooling(key_name(backend, env))


async def open_pooled(
    p: Plan, open_plan: Open, replan: Replan, pools: KeyPools, metrics: Metrics, cooldown: float
) -> tuple[Plan, Opened]:
    """``p`` opened; while its pool key answers 429, that key cools down for the
    upstream's ``retry-after`` (else ``cooldown`` seconds) and the request is planned
    again, with the session's next key (nothing has reached the client yet). The 429 is
    the answer once every key of the pool is cooling."""
    while True:
        try:
            return await open_plan(p)
        except UpstreamError as e:
            env, backend = p.key_env, p.route.backend
            if env is None or e.status != 429:
                raise
            pools.cool(backend, env, e.retry_after or cooldown)
            metrics.add("toolwire_proxy_key_cooldowns_total", backend=backend, key=env)
            if not pools.ready(backend):
                raise
            p = await replan(p)


__all__ = ["KeyPools", "choose", "key_name", "open_pooled"]

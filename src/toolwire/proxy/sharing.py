"""What a proxy process holds of the state its replicas share (docs/proxy.md, "Shared
limits and key pools"): the shared state, the cooldowns pulled from it, the key pools,
and the ``[proxy.limits]`` admission, each call run where it belongs (a worker thread
when the state is Redis or SQLite)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import partial
from typing import TypeVar

from toolwire.proxy.cooling import SharedCooldowns
from toolwire.proxy.errors import RateLimitedError
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.pools import KeyPools
from toolwire.proxy.ratelimit import Caller, admit, caller_of
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.shared import RedisShared, SharedState, open_shared

_T = TypeVar("_T")


class Sharing:
    """The shared state of one proxy process: ``cooldowns``, ``pools``, ``admit``."""

    def __init__(self, settings: ProxySettings, metrics: Metrics) -> None:
        self.settings, self.metrics = settings, metrics
        self._limited = settings.limits.any  # the settings are frozen: asked once
        self.state: SharedState = open_shared(settings.store)
        # One process's memory needs no pull or push: the table itself is the state.
        shared = self.state if self.state.blocking else None
        self.cooldowns = SharedCooldowns(settings.failover_cooldown, shared=shared)
        self.pools = KeyPools(settings, self.state, self.cooldowns)

    async def admit(
        self, headers: Mapping[str, str], tokens: int, caller: Caller | None = None
    ) -> None:
        """Count a request of ``tokens`` input tokens against ``[proxy.limits]``, as
        ``caller`` (default: its credential's digest); ``RateLimitedError`` if over."""
        if not self._limited:
            return
        who = caller_of(headers) if caller is None else caller
        try:
            await self.run(partial(admit, self.state, self.settings.limits, who, tokens))
        except RateLimitedError:
            self.metrics.add("toolwire_proxy_rate_limited_total")
            raise

    async def push(self) -> None:
        """Write the cooldowns this process started, before its response leaves."""
        if self.cooldowns.pending:
            await self.run(self.cooldowns.push)

    async def run(self, work: Callable[[], _T]) -> _T:
        """Run ``work``, which reads or writes the shared state, where it belongs."""
        if self.state.blocking:
            return await asyncio.to_thread(work)
        return work()

    def close(self) -> None:
        """Close Redis's connections (it reconnects if the app starts again)."""
        if isinstance(self.state, RedisShared):
            self.state.close()


__all__ = ["Sharing"]

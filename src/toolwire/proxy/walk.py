"""Walking a request's failover chain (docs/proxy.md, "Failover"): the I/O around
``failover.py``'s decisions.

Each backend of the chain is planned (the first plan is the routed one) and opened in
turn; cooling backends are skipped, a failure that is the upstream's (``retryable``)
cools its backend and sends the request on, and the first backend whose first event
arrives answers. Nothing has been relayed to the client at any point here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from toolwire.events import StreamError
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.failover import Cooldowns, retryable
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.plan import Failover, Plan
from toolwire.proxy.upstream import Opened

Open = Callable[[Plan], Awaitable[tuple[Plan, Opened]]]
Replan = Callable[[Failover], Awaitable[Plan]]


async def walk(
    p: Plan,
    names: list[str],
    *,
    sticky: bool,
    cooldowns: Cooldowns,
    metrics: Metrics,
    open_plan: Open,
    replan: Replan,
) -> tuple[Plan, Opened]:
    """The plan that answered and its opened stream; the last failure if every one failed
    (its ``backend`` set). ``p``: the routed plan, ``names``: its chain."""
    order = cooldowns.order(names)
    for name in names:
        if name not in order:
            metrics.add("toolwire_proxy_cooldown_skips_total", backend=name)
    for i, name in enumerate(order):
        if name != p.route.backend:
            p = await replan(Failover(name, p, sticky))
        try:
            p, opened = await open_plan(p)
            await refused_first(opened)
        except UpstreamError as e:
            e.backend = name
            if not retryable(e.status, e.kind):
                raise
            cooldowns.fail(name, e.retry_after or 0.0)  # at least what it asked for
            metrics.add("toolwire_proxy_cooldowns_total", backend=name)
            if i == len(order) - 1:
                raise
            metrics.add("toolwire_proxy_failovers_total", backend=name)
            continue
        cooldowns.succeed(name)
        return p, opened
    raise AssertionError("unreachable: a chain is never empty")


async def refused_first(opened: Opened) -> None:
    """An upstream whose first event is an overload or rate-limit ``error`` event (an
    Anthropic stream may start so) refused the request: nothing has been relayed yet."""
    first = opened.first
    if isinstance(first, StreamError):
        said = first.raw or first.message
        for kind, status in (("overloaded_error", 529), ("rate_limit_error", 429)):
            if kind in said:
                await opened.rest.aclose()
                raise UpstreamError(status, kind, first.message)


__all__ = ["refused_first", "walk"]

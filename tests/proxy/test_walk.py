"""Walking the failover chain (``toolwire.proxy.walk``), with fake plans and upstreams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

import pytest

from toolwire.events import Event, StreamError, TextDelta
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.failover import Cooldowns
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.plan import Failover, Plan
from toolwire.proxy.routing import Route
from toolwire.proxy.upstream import Opened
from toolwire.proxy.walk import walk


@dataclass
class _Plan:
    route: Route


async def _events(*events: Event) -> AsyncGenerator[Event, None]:
    for event in events:
        yield event


def _opened(first: Event, *rest: Event) -> Opened:
    return Opened(first, _events(*rest), 0.0)


class Upstreams:
    """Each backend's outcome: an ``UpstreamError`` to raise, or what it opens with."""

    def __init__(self, **outcomes: UpstreamError | Opened) -> None:
        self.outcomes = outcomes
        self.tried: list[str] = []
        self.failovers: list[Failover] = []

    async def open_plan(self, p: Plan) -> tuple[Plan, Opened]:
        name = p.route.backend
        self.tried.append(name)
        outcome = self.outcomes[name]
        if isinstance(outcome, UpstreamError):
            raise outcome
        return p, outcome

    async def replan(self, failover: Failover) -> Plan:
        self.failovers.append(failover)
        return cast(Plan, _Plan(Route(failover.backend, "m", "failover")))


def _walk(
    ups: Upstreams,
    names: list[str],
    cooldowns: Cooldowns,
    metrics: Metrics,
    *,
    sticky: bool = False,
) -> tuple[Plan, Opened]:
    primary = cast(Plan, _Plan(Route(names[0], "m", "default")))
    work = walk(
        primary,
        names,
        sticky=sticky,
        cooldowns=cooldowns,
        metrics=metrics,
        open_plan=ups.open_plan,
        replan=ups.replan,
    )
    return asyncio.run(work)


def _clock() -> Any:
    return lambda: 100.0


def test_a_rate_limit_sends_the_request_on_and_cools_the_backend() -> None:
    ups = Upstreams(a=UpstreamError(429, "rate_limit_error", "slow"), b=_opened(TextDelta("hi")))
    cooldowns, metrics = Cooldowns(30.0, _clock()), Metrics()
    p, opened = _walk(ups, ["a", "b"], cooldowns, metrics, sticky=True)
    assert p.route.backend == "b"
    assert opened.first == TextDelta("hi")
    assert ups.tried == ["a", "b"]
    (failover,) = ups.failovers
    assert (failover.backend, failover.failed.route.backend, failover.sticky) == ("b", "a", True)
    assert cooldowns.cooling("a")
    assert metrics.value("toolwire_proxy_failovers_total", backend="a") == 1
    assert metrics.value("toolwire_proxy_cooldowns_total", backend="a") == 1
    # The next request skips the cooling backend without trying it.
    ups.tried.clear()
    _walk(ups, ["a", "b"], cooldowns, metrics)
    assert ups.tried == ["b"]
    assert metrics.value("toolwire_proxy_cooldown_skips_total", backend="a") == 1


def test_an_overloaded_first_event_fails_over() -> None:
    overloaded = StreamError("Overloaded", raw='{"type": "overloaded_error"}')
    ups = Upstreams(a=_opened(overloaded), b=_opened(TextDelta("hi")))
    p, _ = _walk(ups, ["a", "b"], Cooldowns(30.0, _clock()), Metrics())
    assert p.route.backend == "b"


def test_no_failover_once_the_first_event_is_an_answer() -> None:
    # The stream fails later: that reaches the client as an error event (the relay's job).
    broken = _opened(TextDelta("partial"), StreamError("connection reset"))
    ups = Upstreams(a=broken, b=_opened(TextDelta("hi")))
    cooldowns = Cooldowns(30.0, _clock())
    p, opened = _walk(ups, ["a", "b"], cooldowns, Metrics())
    assert p.route.backend == "a"
    assert opened is broken
    assert ups.tried == ["a"]
    assert not cooldowns.cooling("a")


def test_a_refused_request_is_not_sent_on() -> None:
    ups = Upstreams(a=UpstreamError(400, "invalid_request_error", "bad"), b=_opened(TextDelta("")))
    cooldowns = Cooldowns(30.0, _clock())
    with pytest.raises(UpstreamError) as raised:
        _walk(ups, ["a", "b"], cooldowns, Metrics())
    assert (raised.value.status, raised.value.backend) == (400, "a")
    assert ups.tried == ["a"]
    assert not cooldowns.cooling("a")


def test_the_last_failure_is_the_answer_when_every_backend_fails() -> None:
    ups = Upstreams(
        a=UpstreamError(529, "overloaded_error", "busy"),
        b=UpstreamError(502, "api_error", "connection reset"),
    )
    metrics = Metrics()
    with pytest.raises(UpstreamError) as raised:
        _walk(ups, ["a", "b"], Cooldowns(30.0, _clock()), metrics)
    assert (raised.value.status, raised.value.backend) == (502, "b")
    assert metrics.value("toolwire_proxy_failovers_total", backend="a") == 1
    assert metrics.value("toolwire_proxy_failovers_total", backend="b") == 0
    assert metrics.value("toolwire_proxy_cooldowns_total", backend="b") == 1

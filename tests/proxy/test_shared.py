"""The state the proxy replicas share (``toolwire.proxy.shared``), on each engine: rate
counters taken atomically, cooldowns, key pins. Redis runs against a real
``redis-server`` (skipped without one); memory and SQLite on an injected clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from tests.proxy.cluster import empty_cluster, redis_cluster  # noqa: F401 (a fixture)
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)
from toolwire.proxy.shared import (
    WINDOW,
    Charge,
    Cooling,
    MemoryShared,
    RedisShared,
    SharedState,
    SQLiteShared,
    open_shared,
)
from toolwire.proxy.shared.redis import COOLDOWNS, PREFIX


class Clock:
    def __init__(self) -> None:
        self.now = 6_000_000.0  # the start of a minute

    def __call__(self) -> float:
        return self.now


Make = Callable[[], SharedState]


@pytest.fixture
def opened() -> Iterator[list[SharedState]]:
    """Every state a test opens, closed after it (a connection left to the collector
    warns in whichever test runs then)."""
    states: list[SharedState] = []
    yield states
    for state in states:
        close = getattr(state, "close", None)
        if close is not None:
            close()


@pytest.fixture(params=["memory", "sqlite"])
def clocked(
    request: pytest.FixtureRequest, tmp_path: Path, opened: list[SharedState]
) -> tuple[Make, Clock]:
    """A factory of states sharing one engine (two SQLite connections: two processes'),
    and the clock they read."""
    clock = Clock()
    if request.param == "memory":
        one = MemoryShared(clock)
        return (lambda: one), clock
    path = tmp_path / "shared.db"
    return _tracked(opened, lambda: SQLiteShared(path, clock)), clock


_E2E = [pytest.mark.e2e, pytest.mark.xdist_group("redis-server")]
_REDIS = pytest.param("redis", marks=_E2E)
_CLUSTER = pytest.param("redis-cluster", marks=_E2E)


@pytest.fixture(params=["memory", "sqlite", _REDIS, _CLUSTER])
def engine(request: pytest.FixtureRequest, tmp_path: Path, opened: list[SharedState]) -> Make:
    """A factory of states on one engine; Redis needs its server, the cluster three (e2e)."""
    if request.param == "memory":
        one = MemoryShared()
        return lambda: one
    if request.param == "sqlite":
        return _tracked(opened, lambda: SQLiteShared(tmp_path / "shared.db"))
    if request.param == "redis-cluster":
        url = request.getfixturevalue("redis_cluster")
        empty_cluster(url)
    else:
        url = request.getfixturevalue("redis_url")
    return _tracked(opened, lambda: RedisShared(url))


def _tracked(opened: list[SharedState], make: Make) -> Make:
    def made() -> SharedState:
        opened.append(make())
        return opened[-1]

    return made


def test_open_shared_follows_the_store_setting(tmp_path: Path, opened: list[SharedState]) -> None:
    opened += [open_shared(str(tmp_path / "s.db")), open_shared("redis://127.0.0.1:9/0")]
    assert isinstance(open_shared("memory"), MemoryShared)
    assert isinstance(opened[0], SQLiteShared)
    assert isinstance(opened[1], RedisShared)  # connects lazily


def test_a_counter_admits_up_to_its_limit_then_says_when_the_window_ends(
    clocked: tuple[Make, Clock],
) -> None:
    make, clock = clocked
    a, b = make(), make()
    clock.now += 15
    charge = [Charge("key:k:requests", 3, 1)]
    assert [s.take(charge, WINDOW) for s in (a, b, a)] == [None, None, None]
    assert b.take(charge, WINDOW) == pytest.approx(45.0)
    clock.now += 45  # the next minute
    assert a.take(charge, WINDOW) is None


def test_a_refused_take_adds_to_no_counter(clocked: tuple[Make, Clock]) -> None:
    make, _ = clocked
    state = make()
    tokens, requests = Charge("key:k:tokens", 100, 60), Charge("key:k:requests", 10, 1)
    assert state.take([requests, tokens], WINDOW) is None
    assert state.take([requests, tokens], WINDOW) is not None  # 120 tokens > 100
    # The request counter was not charged by the refusal: 8 more requests fit.
    assert all(state.take([requests], WINDOW) is None for _ in range(9))
    assert state.take([requests], WINDOW) is not None


def test_a_request_bigger_than_the_limit_passes_alone(clocked: tuple[Make, Clock]) -> None:
    make, _ = clocked
    state = make()
    assert state.take([Charge("t", 100, 500)], WINDOW) is None
    assert state.take([Charge("t", 100, 1)], WINDOW) is not None


def test_pins_expire(clocked: tuple[Make, Clock]) -> None:
    make, clock = clocked
    a, b = make(), make()
    a.pin("claude:s1", "K2", 60)
    assert b.pinned("claude:s1") == "K2"
    assert b.pinned("claude:s2") is None
    clock.now += 61
    assert b.pinned("claude:s1") is None


def test_every_engine_shares_cooldowns_and_pins(engine: Make) -> None:
    a, b = engine(), engine()
    a.cool("key:claude:K1", Cooling(123.5, 2))
    a.cool("glm", Cooling(99.0, 1))
    assert b.cooled() == {"key:claude:K1": Cooling(123.5, 2), "glm": Cooling(99.0, 1)}
    b.warm("glm")
    assert a.cooled() == {"key:claude:K1": Cooling(123.5, 2)}
    a.pin("claude:s1", "K3", 60)
    assert b.pinned("claude:s1") == "K3"


def test_a_take_over_several_subjects_charges_all_or_none(engine: Make) -> None:
    # On a Redis Cluster the user's and the team's counters sit in two slots.
    if time.time() % WINDOW > WINDOW - 5:  # a fixed window: do not straddle two minutes
        time.sleep(WINDOW - time.time() % WINDOW + 0.1)
    state = engine()
    user, team = Charge("user:u:requests", 2, 1), Charge("team:t:requests", 1, 1)
    assert state.take([user, team], WINDOW) is None
    assert state.take([user, team], WINDOW) is not None  # the team's one is taken
    assert state.take([user], WINDOW) is None  # the refused take left the user's room
    assert state.take([user], WINDOW) is not None


def test_concurrent_takes_never_admit_more_than_the_limit(engine: Make) -> None:
    """Eight threads, each its own connection, race for 20 requests of a minute."""
    states = [engine() for _ in range(8)]
    admitted: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(len(states))

    def run(state: SharedState) -> None:
        start.wait()
        for _ in range(10):
            ok = state.take([Charge("team:t:requests", 20, 1)], WINDOW) is None
            with lock:
                admitted.append(ok)

    threads = [threading.Thread(target=run, args=(s,)) for s in states]
    minute = time.time() // WINDOW
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    turned = time.time() // WINDOW != minute  # a new window: 20 more may pass
    assert len(admitted) == 80
    assert admitted.count(True) == 20 or (turned and admitted.count(True) <= 40)


@pytest.mark.e2e
@pytest.mark.xdist_group("redis-server")
def test_redis_counters_expire_and_nothing_holds_a_secret(
    redis_url: str,  # noqa: F811 (a fixture)
    opened: list[SharedState],
) -> None:
    state = RedisShared(redis_url)
    opened.append(state)
    state.take([Charge("key:abc:requests", 5, 1)], WINDOW)
    state.cool("key:claude:K1", Cooling(1.0, 1))
    state.pin("claude:s1", "K1", 60)
    with redis.Redis.from_url(redis_url) as raw:
        (counter,) = raw.keys(PREFIX + "limit:*")
        assert 0 < raw.ttl(counter) <= 2 * WINDOW
        assert 0 < raw.ttl(PREFIX + "pin:claude:s1") <= 60
        assert raw.hkeys(COOLDOWNS) == [b"key:claude:K1"]

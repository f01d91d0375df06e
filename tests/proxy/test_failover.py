"""The failover core (``toolwire.proxy.failover``): cooldowns on an injected clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.proxy.support import request_body, write_config
from toolwire.proxy import load_settings
from toolwire.proxy.failover import MAX_FACTOR, Cooldowns, chain, retryable
from toolwire.proxy.plan import Failover, Plan, plan
from toolwire.proxy.stores import MemoryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_cooldown_doubles_on_repeated_failures_up_to_ten_times() -> None:
    clock = Clock()
    cooldowns = Cooldowns(30.0, clock)
    seconds = [cooldowns.fail("a") for _ in range(7)]
    assert seconds == [30, 60, 120, 240, 300, 300, 300]
    assert max(seconds) == 30 * MAX_FACTOR


def test_a_success_ends_the_streak() -> None:
    cooldowns = Cooldowns(5.0, Clock())
    cooldowns.fail("a")
    cooldowns.fail("a")
    cooldowns.succeed("a")
    assert cooldowns.fail("a") == 5.0


def test_a_backend_is_skipped_while_cooling_and_tried_once_it_has_cooled() -> None:
    clock = Clock()
    cooldowns = Cooldowns(30.0, clock)
    names = ["primary", "glm", "local"]
    assert cooldowns.order(names) == names
    cooldowns.fail("primary")
    assert cooldowns.cooling("primary")
    assert cooldowns.order(names) == ["glm", "local"]
    clock.now += 29.9
    assert cooldowns.order(names) == ["glm", "local"]
    clock.now += 0.2
    assert not cooldowns.cooling("primary")
    assert cooldowns.order(names) == names


def test_when_every_backend_cools_all_are_tried_the_soonest_back_first() -> None:
    clock = Clock()
    cooldowns = Cooldowns(10.0, clock)
    cooldowns.fail("a")
    cooldowns.fail("a")  # 20 s
    cooldowns.fail("b")  # 10 s
    assert cooldowns.order(["a", "b"]) == ["b", "a"]


def test_the_chain_is_the_primary_then_its_own_fallbacks_once_each() -> None:
    fallbacks = {"claude": ["glm", "local", "glm"], "glm": ["claude"]}
    assert chain("claude", fallbacks) == ["claude", "glm", "local"]
    assert chain("glm", fallbacks) == ["glm", "claude"]
    assert chain("local", fallbacks) == ["local"]


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (429, "rate_limit_error", True),
        (529, "overloaded_error", True),
        (500, "api_error", True),
        (502, "api_error", True),
        (504, "timeout_error", True),
        (400, "invalid_request_error", False),
        (401, "authentication_error", False),
        (413, "request_too_large", False),
    ],
)
def test_what_fails_over(status: int, kind: str, expected: bool) -> None:
    assert retryable(status, kind) is expected


def _planned(tmp: Path, sticky: bool) -> tuple[MemoryStore, Plan, Plan]:
    """A session whose first turn came from ``claude``, then a request that failed over."""
    config = write_config(tmp, "http://127.0.0.1:9", "http://127.0.0.1:9")
    table = f'model = "claude-up"\nfallbacks = ["local"]\nsticky = {str(sticky).lower()}'
    config.write_text(config.read_text().replace('model = "claude-up"', table))
    settings = load_settings(config, default_backend="claude")
    store = MemoryStore()
    history: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    plan(request_body(history), {}, settings, store)
    history += [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "more"}]
    failed = plan(request_body(history), {}, settings, store)
    sent_on = plan(
        request_body(history), {}, settings, store, failover=Failover("local", failed, sticky)
    )
    return store, failed, sent_on


@pytest.mark.parametrize("sticky", [False, True])
def test_a_failover_is_recorded_as_a_switch_made_sticky_only_if_asked(
    tmp_path: Path, sticky: bool
) -> None:
    store, failed, sent_on = _planned(tmp_path, sticky)
    assert (failed.route.backend, sent_on.route.backend) == ("claude", "local")
    assert sent_on.route.reason == "failover"
    state = store.load("sess-1")
    # One switch, from the backend that produced the history: the failed try left none.
    switch = state.conversation.point
    assert switch is not None
    assert (switch.kind, switch.at, switch.target) == ("switch", 3, "local")
    assert state.last_backend == "local"
    assert state.forced == ("local" if sticky else None)


def test_a_retry_after_longer_than_the_cooldown_is_waited_out() -> None:
    clock = Clock()
    cooldowns = Cooldowns(30.0, clock)
    assert cooldowns.fail("a", at_least=90.0) == 90.0
    clock.now += 60
    assert cooldowns.cooling("a")
    assert cooldowns.fail("b", at_least=5.0) == 30.0  # a shorter one: the usual cooldown
    cooldowns.hold("c", 12.0)  # a pool key: exactly its retry-after
    clock.now += 12.5
    assert not cooldowns.cooling("c")

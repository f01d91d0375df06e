"""``[proxy.limits]`` (``toolwire.proxy.ratelimit``): who a request counts against and
what it takes, on the memory state with an injected clock."""

from __future__ import annotations

import pytest

from tests.proxy.test_shared import Clock
from toolwire.proxy.errors import RateLimitedError
from toolwire.proxy.ratelimit import ANONYMOUS, Caller, LimitsTable, admit, caller_of
from toolwire.proxy.shared import MemoryShared


def test_the_caller_is_a_digest_of_the_credential_whichever_header_carries_it() -> None:
    by_header = caller_of({"x-api-key": "sk-team-secret"})
    by_bearer = caller_of({"authorization": "bearer sk-team-secret"})
    assert by_header == by_bearer
    assert "sk-team-secret" not in by_header.key
    assert caller_of({"x-api-key": "another"}) != by_header
    assert caller_of({}) == Caller(ANONYMOUS)


def test_a_user_limit_holds_across_the_users_keys_and_a_team_limit_across_users() -> None:
    clock = Clock()
    state = MemoryShared(clock)
    limits = LimitsTable(user_requests_per_minute=2, team_tokens_per_minute=1_000)
    ann_laptop, ann_ci = Caller("k1", "ann", "core"), Caller("k2", "ann", "core")
    admit(state, limits, ann_laptop, 100)
    admit(state, limits, ann_ci, 100)
    with pytest.raises(RateLimitedError) as raised:
        admit(state, limits, ann_laptop, 100)  # ann's third request this minute
    assert raised.value.status == 429
    assert raised.value.kind == "rate_limit_error"
    assert raised.value.retry_after == 60
    admit(state, limits, Caller("k3", "bob", "core"), 700)  # the team is at 900 tokens
    with pytest.raises(RateLimitedError):
        admit(state, limits, Caller("k3", "bob", "core"), 200)
    clock.now += 60
    admit(state, limits, ann_laptop, 100)  # a new minute


def test_no_limit_set_counts_nothing() -> None:
    state = MemoryShared()
    for _ in range(1000):
        admit(state, LimitsTable(), Caller("k"), 10**6)
    assert not LimitsTable().any
    assert LimitsTable(team_requests_per_minute=1).any

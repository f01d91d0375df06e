"""The accounts stores (memory, SQLite, Redis): keys kept hashed, and a reservation that
cannot overshoot when many threads, or two connections as two processes would, race."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.proxy.cluster import empty_cluster, redis_cluster  # noqa: F401 (a fixture)
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)
from toolwire.proxy.people.accounts import Accounts, MemoryAccounts, SQLiteAccounts, issue
from toolwire.proxy.people.keys import Charge, allowed, digest, dollars, parse_budget
from toolwire.proxy.people.ledger import LedgerRow
from toolwire.proxy.people.redis_accounts import RedisAccounts
from toolwire.proxy.people.writer import Writer

_REDIS = [pytest.mark.e2e, pytest.mark.xdist_group("redis-server")]
# Two handles on one store: what two proxy processes have.
Pair = Callable[[], tuple[Accounts, Accounts]]


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        pytest.param("redis", marks=_REDIS),
        pytest.param("redis-cluster", marks=_REDIS),
    ]
)
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    if request.param == "memory":
        shared = MemoryAccounts()
        yield lambda: (shared, shared)
    elif request.param == "sqlite":
        yield lambda: (SQLiteAccounts(tmp_path / "s.db"), SQLiteAccounts(tmp_path / "s.db"))
    else:
        url = request.getfixturevalue("redis_url" if request.param == "redis" else "redis_cluster")
        if request.param == "redis-cluster":
            empty_cluster(url)
        yield lambda: (RedisAccounts(url), RedisAccounts(url))


def test_twenty_racing_reservations_of_a_tenth_fit_a_budget_of_one_exactly_ten_times(
    pair: Pair,
) -> None:
    first, second = pair()
    start = threading.Barrier(20)
    admitted: list[bool] = []

    def reserve(accounts: Accounts) -> None:
        start.wait()
        charge = Charge("user:alice:0", 1_000_000, 100_000, 3600)
        admitted.append(accounts.reserve([charge]) is None)

    threads = [threading.Thread(target=reserve, args=((first, second)[n % 2],)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert admitted.count(True) == 10
    assert first.spent("user:alice:0") == second.spent("user:alice:0") == 1_000_000


def test_a_reservation_charges_the_user_and_the_team_or_neither(pair: Pair) -> None:
    accounts, other = pair()
    user = Charge("user:alice:0", 1_000_000, 300_000, 60)
    team = Charge("team:eng:0", 500_000, 300_000, 60)
    assert accounts.reserve([user, team]) is None
    refused = other.reserve([user, team])  # the user has room; the team does not
    assert refused is not None
    assert refused.charge == team
    assert refused.spent == 300_000
    assert accounts.spent("user:alice:0") == 300_000  # not charged for the refused one
    # Settling gives back what the response did not use.
    other.settle([Charge("user:alice:0", 1_000_000, -250_000, 60)])
    assert accounts.spent("user:alice:0") == 50_000


def test_keys_are_stored_as_digests_and_revoked_everywhere(pair: Pair) -> None:
    accounts, other = pair()
    record, secret = issue(accounts, "alice", team="eng", budget="50usd/30d", models=["glm*"])
    assert record.digest == digest(secret)
    assert all(secret not in r.to_json() for r in accounts.records())
    found = other.find(digest(secret))
    assert found is not None
    assert (found.user, found.team, found.models) == ("alice", "eng", ("glm*",))
    assert other.budgets(["user:alice", "team:eng"]) == {
        "user:alice": parse_budget("50usd/30d", record.created)
    }
    assert other.any_key()
    assert accounts.revoke(record.id)
    revoked = other.find(digest(secret))
    assert revoked is not None
    assert revoked.revoked
    assert not accounts.revoke("key_nope")


@pytest.mark.e2e
@pytest.mark.xdist_group("redis-server")
def test_redis_keeps_no_secret(redis_url: str) -> None:  # noqa: F811 (a fixture)
    _, secret = issue(RedisAccounts(redis_url), "alice")
    client = redis.Redis.from_url(redis_url)
    stored = b"".join(
        client.dump(k) or b"" for k in client.scan_iter("toolwire:proxy:*")
    )  # every value, serialised
    client.close()
    assert stored
    assert secret.encode() not in stored


@pytest.mark.e2e
@pytest.mark.xdist_group("redis-server")
def test_counters_are_hash_tagged_and_an_older_versions_spend_is_kept(
    redis_url: str,  # noqa: F811 (a fixture)
) -> None:
    client = redis.Redis.from_url(redis_url)
    client.set("toolwire:proxy:spent:user:alice:3", 700_000, ex=3600)  # as an older version
    accounts = RedisAccounts(redis_url)
    assert accounts.spent("user:alice:3") == 700_000
    assert accounts.reserve([Charge("user:alice:3", 1_000_000, 400_000, 60)]) is not None
    assert accounts.reserve([Charge("team:eng:3", 1_000_000, 400_000, 60)]) is None
    names = sorted(k.decode() for k in client.scan_iter("toolwire:proxy:spent:*"))
    assert names == ["toolwire:proxy:spent:{team:eng}:3", "toolwire:proxy:spent:{user:alice}:3"]
    assert 3000 < int(client.ttl("toolwire:proxy:spent:{user:alice}:3")) <= 3600
    client.set("toolwire:proxy:spent:user:bob:3", 1)  # moved once: not again
    assert RedisAccounts(redis_url).spent("user:bob:3") == 0
    client.close()
    accounts.close()


def test_budgets_are_written_as_amount_per_period_and_roll_in_fixed_windows() -> None:
    budget = parse_budget("50usd/30d", start=1000.0)
    assert (budget.limit, budget.period) == (50_000_000, 30 * 86400)
    assert budget.window(1000.0) == 0
    assert budget.window(1000.0 + 30 * 86400) == 1
    assert budget.resets(1000.0 + 5) == 1000.0 + 30 * 86400
    assert parse_budget("0.5usd/12h", 0).limit == 500_000
    assert parse_budget("5USD/1d", 0).period == 86400
    for wrong in ("50", "50usd", "50eur/30d", "usd/30d", "5usd/0d"):
        with pytest.raises(ValueError, match="AMOUNT/PERIOD"):
            parse_budget(wrong, 0)
    assert dollars(1_250_000) == "$1.25"


def test_models_patterns_match_the_backend_the_model_or_both() -> None:
    assert allowed((), "glm", "glm-4.6")
    assert allowed(("glm",), "glm", "glm-4.6")
    assert allowed(("claude-*",), "anthropic", "claude-sonnet-4-5", {"claude-sonnet-4-5"})
    assert allowed(("glm,glm-4.*",), "glm", "glm-4.6")
    assert not allowed(("glm",), "anthropic", "claude-sonnet-4-5")
    # A model name the client wrote after a comma opens no backend.
    assert not allowed(("cheap",), "dear", "cheap")
    assert not allowed(("claude-*",), "dear", "claude-sonnet-4-5", {"dear-model"})


class _SlowLedger:
    """A ledger whose every write takes a while (a database far away)."""

    def __init__(self) -> None:
        self.rows: list[LedgerRow] = []

    def write(self, rows: Sequence[LedgerRow]) -> None:
        time.sleep(0.05)
        self.rows += rows

    def spend(self, question: object) -> list[Any]:
        return []

    def recent(self, count: int) -> list[LedgerRow]:
        return []

    def close(self) -> None:
        pass


def test_the_writer_settles_and_writes_everything_queued_before_it_stops() -> None:
    ledger = _SlowLedger()
    accounts = MemoryAccounts()
    writer = Writer(ledger)
    row = LedgerRow(0.0, "alice", "", "s", "b", "m", 1, 2, 3, 4, 0.5, "ok")
    for _ in range(3):
        for n in range(400):
            writer.put(row)
            writer.put(partial(accounts.settle, [Charge("user:alice:0", 10, n, 60)]))
        time.sleep(0.01)  # more rows arrive while a batch is being written
    writer.close()
    assert len(ledger.rows) == 1200
    assert accounts.spent("user:alice:0") == 3 * sum(range(400))


def test_a_rotation_expires_the_old_key_and_another_handle_sees_it(pair: Pair) -> None:
    from toolwire.proxy.people.accounts import rotate

    first, second = pair()
    old, _ = issue(first, "alice", team="eng", admin=True)
    new, secret, expiring = rotate(first, old.id, 60.0)
    seen_old, seen_new = second.find(old.digest), second.find(digest(secret))
    assert seen_old is not None
    assert seen_new is not None
    assert seen_old.expires == expiring.expires
    assert seen_old.usable(time.time())
    assert not seen_old.usable(time.time() + 61)
    assert (seen_new.id, seen_new.user, seen_new.team, seen_new.admin) == (
        new.id, "alice", "eng", True,
    )  # fmt: skip
    assert seen_new.expires is None
    with pytest.raises(KeyError):
        rotate(first, "key_unknown", 60.0)

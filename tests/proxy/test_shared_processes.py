"""Two ``toolwire proxy`` processes on one real Redis share their limits: a pool key
that answered 429 is skipped by the other replica, a session keeps one upstream key
through both, a backend's cooldown and ``[proxy.limits]`` hold across them.

The upstreams are fakes on 127.0.0.1 recording which key each request carried; the
keys are made-up values in the proxies' environment, looked for in every answer,
``/metrics`` and log afterwards.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.cluster import redis_cluster, store_url  # noqa: F401 (fixtures)
from tests.proxy.support import anthropic_text_stream, request_body
from tests.proxy.test_conversation_processes import _processes
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("redis-server")]

KEYS = {
    "POOL_K1": "sk-pool-first-0001",
    "POOL_K2": "sk-pool-second-02",
    "POOL_K3": "sk-pool-third-003",
}
_RATE_LIMITED = json.dumps(
    {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
).encode()


class Upstream:
    """An Anthropic upstream: which key each request carried; ``limited`` keys get 429
    with ``retry-after: 30``."""

    def __init__(self) -> None:
        self.limited: set[str] = set()
        self.keys: list[str] = []
        self._lock = threading.Lock()
        self.server = FakeServer(respond=self.respond)

    def respond(self, received: Received) -> Reply:
        key = received.headers.get("x-api-key", "")
        with self._lock:
            self.keys.append(key)
        if key in self.limited:
            return Reply(429, [_RATE_LIMITED], {"retry-after": "30"}, "application/json")
        return Reply(200, anthropic_text_stream("ok"))

    def taken(self) -> list[str]:
        """The keys sent since the last call, as variable names."""
        with self._lock:
            keys, self.keys = self.keys, []
        names = {v: k for k, v in KEYS.items()}
        return [names.get(k, k) for k in keys]


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    fake = Upstream()
    with fake.server:
        yield fake


@pytest.fixture
def pool_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)  # the proxy processes inherit them


def _config(tmp: Path, redis: str, backends: str, proxy: str = "") -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f'default_backend = "claude"\n{backends}\n[proxy]\nstore = "{redis}"\n{proxy}\n',
        encoding="utf-8",
    )
    return path


def _ask(url: str, session: str, token: str | None = None) -> httpx2.Response:
    headers = {} if token is None else {"x-api-key": token}
    # The session as Claude Code sends it: in metadata.user_id (JSON).
    metadata = {"user_id": json.dumps({"device_id": "d", "session_id": session})}
    messages = [{"role": "user", "content": f"hello from {session}"}]
    body = request_body(messages, max_tokens=100, metadata=metadata)
    return httpx2.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)


def _no_key_leaked(tmp: Path, *texts: str) -> None:
    logs = [p.read_text(errors="replace") for p in tmp.glob("*.log")]
    for text in [*texts, *logs]:
        assert not any(value in text for value in KEYS.values())


@pytest.mark.usefixtures("pool_keys")
def test_a_session_keeps_its_key_on_both_replicas_and_a_429_moves_it_everywhere(
    tmp_path: Path,
    upstream: Upstream,
    redis_url: str,  # noqa: F811 (a fixture)
) -> None:
    backends = (
        f'[backends.claude]\nprovider = "anthropic"\nbase_url = "{upstream.server.url}"\n'
        f'model = "claude-up"\napi_key_envs = {json.dumps(list(KEYS))}\n'
    )
    config = _config(tmp_path, redis_url, backends)
    sessions = [f"0b6c5a1e-0000-4000-8000-{n:012d}" for n in range(8)]
    with _processes(config, "a", "b") as pair:
        a, b = pair["a"].url, pair["b"].url
        chosen: dict[str, str] = {}
        for session in sessions:
            for url in (a, b, a, b):
                assert _ask(url, session).status_code == 200
            used = set(upstream.taken())
            assert len(used) == 1, f"{session} used {used}"  # one key through both replicas
            chosen[session] = used.pop()
        assert len(set(chosen.values())) > 1  # the sessions spread over the pool

        session = sessions[0]
        first = chosen[session]
        upstream.limited.add(KEYS[first])
        reply = _ask(a, session)  # a 429 on the session's key: a answers with the next key
        assert reply.status_code == 200, reply.text
        tried = upstream.taken()
        assert len(tried) == 2
        assert tried[0] == first
        moved = tried[1]
        assert moved != first

        # b skips the cooling key from its next request, for every session pinned to it.
        assert _ask(b, session).status_code == 200
        assert upstream.taken() == [moved]
        others = [s for s in sessions if chosen[s] == first and s != session]
        for other in others:
            assert _ask(b, other).status_code == 200
        assert first not in upstream.taken()

        # The key is back: the session stays on its new key (its prompt cache is there).
        upstream.limited.clear()
        assert _ask(b, session).status_code == 200
        assert upstream.taken() == [moved]

        # Every key answering 429: the client gets it, naming no key.
        upstream.limited.update(KEYS.values())
        refused = _ask(a, "another-session")
        assert refused.status_code == 429
        metrics = [httpx2.get(f"{u}/metrics", timeout=5).text for u in (a, b)]
        assert f'key="{first}"' in metrics[0]
    _no_key_leaked(tmp_path, refused.text, *metrics)


def test_a_backend_cooled_on_one_replica_is_skipped_by_the_other(
    tmp_path: Path,
    store_url: str,  # noqa: F811 (a fixture: one Redis, then a Redis Cluster)
) -> None:
    limited = Reply(429, [_RATE_LIMITED], {"retry-after": "30"}, "application/json")
    with (
        FakeServer(respond=lambda r: limited) as primary,
        FakeServer(respond=lambda r: Reply(200, anthropic_text_stream("ok"))) as second,
    ):
        backends = (
            f'[backends.claude]\nprovider = "anthropic"\nbase_url = "{primary.url}"\n'
            f'model = "claude-up"\nfallbacks = ["second"]\n'
            f'[backends.second]\nprovider = "anthropic"\nbase_url = "{second.url}"\n'
            f'model = "claude-up"\n'
        )
        config = _config(tmp_path, store_url, backends)
        with _processes(config, "a", "b") as pair:
            first = _ask(pair["a"].url, "s1")
            assert first.headers["x-toolwire-backend"] == "second"
            assert len(primary.requests) == 1
            then = _ask(pair["b"].url, "s2")
            assert then.headers["x-toolwire-backend"] == "second"
            assert len(primary.requests) == 1  # b did not try the cooling backend
            assert len(second.requests) == 2


def test_a_rate_limit_holds_across_both_replicas(
    tmp_path: Path,
    upstream: Upstream,
    store_url: str,  # noqa: F811 (a fixture: one Redis, then a Redis Cluster)
) -> None:
    backends = (
        f'[backends.claude]\nprovider = "anthropic"\nbase_url = "{upstream.server.url}"\n'
        'model = "claude-up"\n'
    )
    proxy = 'token = "team-token"\n[proxy.limits]\nrequests_per_minute = 3\n'
    config = _config(tmp_path, store_url, backends, proxy)
    with _processes(config, "a", "b") as pair:
        a, b = pair["a"].url, pair["b"].url
        if time.time() % 60 > 50:  # a fixed window: do not straddle two minutes
            time.sleep(61 - time.time() % 60)
        assert [_ask(u, "s", "team-token").status_code for u in (a, b, a)] == [200] * 3
        refused = _ask(b, "s", "team-token")
        assert refused.status_code == 429
        assert refused.json()["type"] == "error"
        assert refused.json()["error"]["type"] == "rate_limit_error"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert len(upstream.keys) == 3  # the refused request never went upstream
        assert _ask(a, "s", "team-token").status_code == 429

"""The proxy's invariant: the upstream request of a session is the same bytes whichever
proxy instance serves it and after a restart.

Hypothesis generates Claude-Code-shaped sessions (a history that grows by prompts and
file reads, some big enough that the proxy compacts them for the small window of
``local``; a ``toolwire proxy switch``) and each step names the instance that serves it:
one of two apps on one shared store, or a new app on a new connection to it (a restart).
The same steps served by one app on a memory store, never restarted, are the reference:
every upstream body must be byte-identical to the reference's. The shared store is a
SQLite file (always) and a real Redis (when ``redis-server`` is on PATH).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.support import (
    anthropic_text_stream,
    grow,
    openai_text_stream,
    request_body,
    windowed_config,
)
from tests.proxy.test_redis import redis_server  # noqa: F401 (a fixture)
from toolwire.proxy import load_settings
from toolwire.proxy.app import Proxy
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.stores import MemoryStore, ProxyStore, RedisStore, SQLiteStore

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("redis-server")]

WINDOW = 12_000  # ``local``'s window: a few big reads overflow it
SESSION = "sess-1"  # request_body's metadata names it

# A step: ("prompt", n) a user prompt; ("read", size) a Read call and its result;
# ("switch", backend) ``toolwire proxy switch``; each served by ("a" | "b" | "restart").
Step = tuple[str, Any, str]
Opener = Callable[[], ProxyStore]

_steps = st.one_of(
    st.tuples(st.just("prompt"), st.integers(0, 9)),
    st.tuples(st.just("read"), st.sampled_from([300, 6_000, 12_000])),
    st.tuples(st.just("switch"), st.sampled_from(["local", "claude"])),
)
_sequences = st.lists(
    st.tuples(_steps, st.sampled_from(["a", "b", "restart"])).map(lambda p: (*p[0], p[1])),
    min_size=2,
    max_size=9,
)


def _answer(received: Received) -> Reply:
    """A short answer, a function of what was sent (so both runs get the same)."""
    text = f"Done after {len(received.body)} bytes."
    if received.path.endswith("/chat/completions"):
        return Reply(chunks=openai_text_stream(text))
    return Reply(chunks=anthropic_text_stream(text))


class _Cluster:
    """The proxy instances of one run: ``a`` and ``b`` on one store (``open_store``
    opens a new connection to it); ``restart`` replaces ``a`` with a new app."""

    def __init__(self, settings: ProxySettings, open_store: Opener) -> None:
        self.settings, self.open_store = settings, open_store
        self.apps = {"a": Proxy(settings, open_store()), "b": Proxy(settings, open_store())}

    def serving(self, who: str) -> Proxy:
        if who == "restart":
            self.apps["a"] = Proxy(self.settings, self.open_store())
            who = "a"
        return self.apps[who]


async def _run(cluster: _Cluster, steps: list[Step], upstream: FakeServer) -> list[bytes]:
    """The upstream bodies of ``steps`` served as they say, in order."""
    seen = len(upstream.requests)
    history: list[dict[str, Any]] = []
    for n, (kind, arg, who) in enumerate(steps):
        app = cluster.serving(who).app()
        async with httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://proxy"
        ) as client:
            if kind == "switch":
                data = {"backend": arg, "session": SESSION}
                reply = await client.post("/control/switch", json=data)
                assert reply.status_code == 200, reply.text
                continue
            grow(history, kind, arg, n)
            body = request_body(history, max_tokens=2_000)
            reply = await client.post("/v1/messages", json=body)
            assert reply.status_code == 200, reply.text
            content = reply.json()["content"]
            history.append({"role": "assistant", "content": content})
    return [r.body for r in upstream.requests[seen:]]


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.e2e)])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Opener]]:
    """Per example, a fresh shared store: a function that opens a new connection to it."""
    opened: list[SQLiteStore | RedisStore] = []
    url = request.getfixturevalue("redis_server") if request.param == "redis" else None
    examples = iter(range(10**9))

    def fresh() -> Opener:
        n = next(examples)

        def connect() -> ProxyStore:
            # The same Redis with a key prefix of its own, or a SQLite file of its own.
            store = (
                SQLiteStore(tmp_path / f"s{n}.db")
                if url is None
                else RedisStore(url, prefix=f"prop:{n}:")
            )
            opened.append(store)
            return store

        return connect

    yield fresh
    for store in opened:
        store.close()


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeServer]:
    with FakeServer(respond=_answer) as fake:
        yield fake


@pytest.fixture(scope="module")
def proxy_settings(upstream: FakeServer, tmp_path_factory: pytest.TempPathFactory) -> ProxySettings:
    """``local`` (OpenAI Chat) with a small window, ``claude`` (Anthropic), one upstream."""
    path = tmp_path_factory.mktemp("prop")
    return load_settings(windowed_config(path, upstream.url, local=WINDOW))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=_sequences)
def test_any_instance_and_a_restart_send_the_same_bytes(
    steps: list[Step],
    shared: Callable[[], Opener],
    upstream: FakeServer,
    proxy_settings: ProxySettings,
) -> None:
    reference = _Cluster(proxy_settings, MemoryStore)
    reference.apps["b"] = reference.apps["a"]
    alone = [(kind, arg, "a") for kind, arg, _ in steps]
    expected = asyncio.run(_run(reference, alone, upstream))
    got = asyncio.run(_run(_Cluster(proxy_settings, shared()), steps, upstream))
    assert len(got) == len(expected)
    for n, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert mine == theirs, f"upstream request {n} differs: {_diff(mine, theirs)}"


def _diff(mine: bytes, theirs: bytes) -> str:
    """Where two bodies first differ, with some context."""
    pairs = zip(mine, theirs, strict=False)
    at = next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(mine), len(theirs)))
    start = max(at - 60, 0)
    return f"at byte {at}: {mine[start : at + 60]!r} vs {theirs[start : at + 60]!r}"

"""The proxy's Redis session store, against a real ``redis-server`` started here.

``make test`` installs ``redis-server`` (Debian's package) when it can; without it on
PATH these tests skip. The server runs on a free loopback port, with no persistence, in
a temporary directory, for the whole test session; each test starts from an empty db.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import redis

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    FILE_TEXT,
    anthropic_text_stream,
    compact_json,
    message_text,
    openai_text_stream,
    post_messages,
    read_turn,
    request_body,
    running,
    settings_for,
    switch_cli,
)
from toolwire.config.schema import ConfigError
from toolwire.proxy import ProxySettings
from toolwire.proxy.app import Proxy
from toolwire.proxy.state import SessionState, switch_point
from toolwire.proxy.stores import MemoryStore, ProxyStore, SQLiteStore, open_store
from toolwire.proxy.stores.redis import KEY_PREFIX, MISSING, RedisStore

# One redis-server per worker: keep its tests on one worker (`--dist loadgroup`).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("redis-server")]

_START_TIMEOUT = 10.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the session; yields its ``redis://`` URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not on PATH (`make test` installs it as root via apt-get)")
    workdir = tmp_path_factory.mktemp("redis")
    port = _free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--dir", str(workdir), "--protected-mode", "yes"]
    log = (workdir / "redis.log").open("wb")
    process = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _wait_for_ping(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_for_ping(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    client = redis.Redis.from_url(url, socket_timeout=1)
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {process.returncode}")
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer PING in {_START_TIMEOUT}s")
            time.sleep(0.05)
    finally:
        client.close()


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The server's URL, its db emptied before the test."""
    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    client.close()
    return redis_server


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis]:
    """A plain client, to look at the keys the store writes."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def test_stores_say_whether_they_block(tmp_path: Path) -> None:
    sqlite = SQLiteStore(tmp_path / "s.db")
    assert (MemoryStore().blocking, sqlite.blocking, RedisStore.blocking) == (False, True, True)
    sqlite.close()


@pytest.mark.parametrize("blocking", [False, True])
def test_the_proxy_runs_a_blocking_store_off_the_loop(tmp_path: Path, blocking: bool) -> None:
    class Probe(MemoryStore):
        pass

    Probe.blocking = blocking
    nowhere = "http://127.0.0.1:9"
    proxy = Proxy(settings_for(tmp_path, nowhere, nowhere), Probe())

    async def where() -> tuple[int, int]:
        return threading.get_ident(), await proxy._with_store(threading.get_ident)

    loop_thread, store_thread = asyncio.run(where())
    assert (store_thread != loop_thread) is blocking


# -- the store's contract, the same for every store ------------------------------------


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProxyStore]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        sqlite = SQLiteStore(tmp_path / "s.db")
        yield sqlite
        sqlite.close()
    else:
        shared = RedisStore(request.getfixturevalue("redis_url"))
        yield shared
        shared.close()


def test_store_keeps_state(store: ProxyStore) -> None:
    state = store.load("s")
    assert state == SessionState()
    assert not state.record("local", 0)
    assert state.record("claude", 2)
    state.forced = "claude"
    store.save("s", state)
    again = store.load("s")
    assert again == SessionState("claude", "claude", switch_point(2, "claude"))
    assert store.load("other") == SessionState()


def test_store_overwrites_and_keeps_sessions_apart(store: ProxyStore) -> None:
    store.save("a", SessionState(forced="claude"))
    store.save("b", SessionState(forced="local"))
    store.save("a", SessionState(None, "local", switch_point(4, "local")))
    assert store.load("a") == SessionState(None, "local", switch_point(4, "local"))
    assert store.load("b") == SessionState(forced="local")


def test_store_takes_any_session_id(store: ProxyStore) -> None:
    odd = "sess:1/ü \n*"
    store.save(odd, SessionState(forced="claude"))
    assert store.load(odd).forced == "claude"
    assert store.load("sess:1").forced is None


# -- what only Redis does ----------------------------------------------------------------


def test_keys_are_namespaced_json(redis_url: str, raw: redis.Redis) -> None:
    store = RedisStore(redis_url)
    state = SessionState("claude", "claude", switch_point(2, "claude"))
    store.save("sess-1", state)
    assert raw.keys("*") == [f"{KEY_PREFIX}sess-1".encode()]
    value = raw.get("toolwire:proxy:session:sess-1")
    assert isinstance(value, bytes)
    assert json.loads(value)["forced"] == "claude"
    assert raw.ttl("toolwire:proxy:session:sess-1") == -1  # no TTL unless asked for
    store.close()


def test_two_stores_and_a_reopened_one_share_state(redis_url: str) -> None:
    first, second = RedisStore(redis_url), RedisStore(redis_url)
    first.save("s", SessionState(forced="claude"))
    assert second.load("s").forced == "claude"
    first.close()
    second.close()
    reopened = RedisStore(redis_url)
    assert reopened.load("s").forced == "claude"
    reopened.close()


def test_ttl_is_set_and_renewed_on_save(redis_url: str, raw: redis.Redis) -> None:
    store = RedisStore(redis_url, ttl=100)
    store.save("s", SessionState(forced="claude"))
    key = store.key("s")
    assert 0 < raw.ttl(key) <= 100
    raw.expire(key, 5)
    store.save("s", SessionState(forced="local"))
    assert raw.ttl(key) > 5
    store.close()


def test_a_session_expires_after_its_ttl(redis_url: str, raw: redis.Redis) -> None:
    store = RedisStore(redis_url, ttl=60)
    store.save("s", SessionState(forced="claude"))
    raw.pexpire(store.key("s"), 50)  # the server's own expiry, sooner than a real TTL
    deadline = time.monotonic() + 5
    while raw.exists(store.key("s")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.load("s") == SessionState()
    store.close()


def test_bad_ttl_is_refused() -> None:
    with pytest.raises(ValueError, match="ttl"):
        RedisStore("redis://127.0.0.1:1/0", ttl=0)  # refused before any connection


def test_update_is_atomic_across_clients(redis_url: str) -> None:
    stores = [RedisStore(redis_url) for _ in range(4)]
    per_thread = 25

    def add_turns(store: RedisStore, name: str) -> None:
        for i in range(per_thread):

            def change(state: SessionState, i: int = i) -> None:
                state.remember([f"{name}-{i}"], name)
                time.sleep(0.001)  # widen the read-write window: the others write meanwhile

            store.update("s", change)

    threads = [threading.Thread(target=add_turns, args=(s, f"b{n}")) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    final = stores[0].load("s")
    assert len(final.produced) == per_thread * len(stores)  # no write was lost
    for n in range(len(stores)):
        mine = [key for key, name in final.produced.items() if name == f"b{n}"]
        assert mine == [f"b{n}-{i}" for i in range(per_thread)]
    assert stores[0].update("s", lambda st: st.record("zz", 9)) is False  # first backend seen
    for store in stores:
        store.close()


def test_open_store_picks_redis_for_a_redis_url(redis_url: str) -> None:
    store = open_store(redis_url, ttl=30)
    assert isinstance(store, RedisStore)
    store.save("s", SessionState(forced="claude"))
    assert open_store(redis_url).load("s").forced == "claude"
    store.close()


def test_settings_choose_the_redis_store(tmp_path: Path, redis_url: str, raw: redis.Redis) -> None:
    settings = settings_for(
        tmp_path, "http://a", "http://b", f'store = "{redis_url}"\nstore_ttl = 60'
    )
    assert (settings.store, settings.store_ttl) == (redis_url, 60)
    proxy = Proxy(settings)
    assert isinstance(proxy.store, RedisStore)
    proxy.store.save("s", SessionState(forced="claude"))
    assert 0 < raw.ttl(f"{KEY_PREFIX}s") <= 60
    proxy.store.close()


def test_store_ttl_needs_redis(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="store_ttl needs a redis:// store"):
        settings_for(tmp_path, "http://a", "http://b", "store_ttl = 60")
    with pytest.raises(ConfigError, match="store_ttl must be an integer"):
        settings_for(tmp_path, "http://a", "http://b", 'store = "redis://x"\nstore_ttl = -1')


def test_missing_redis_package_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis -> ImportError
    with pytest.raises(ConfigError) as caught:
        settings_for(tmp_path, "http://a", "http://b", 'store = "redis://127.0.0.1:1/0"')
    assert str(caught.value) == MISSING
    assert "pip install 'toolwire[redis]'" in MISSING


# -- two proxy processes behind one Redis ----------------------------------------------


def test_two_proxies_share_a_switch_and_rewrite_identically(tmp_path: Path, redis_url: str) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        openai_up.script(Reply(chunks=openai_text_stream("ok")))
        anthropic_up.script(*[Reply(chunks=anthropic_text_stream("fine")) for _ in range(3)])
        settings_a, settings_b = _two_settings(tmp_path, openai_up.url, anthropic_up.url, redis_url)
        with running(settings_a) as url_a, running(settings_b) as url_b:
            history = [
                {"role": "user", "content": "Read src/a.py"},
                *read_turn("call_a", "src/a.py", FILE_TEXT),
                {"role": "user", "content": "What did it say?"},
            ]
            post_messages(url_a, history)  # on the default backend (local), through A
            switched = httpx2.post(
                f"{url_b}/control/switch", json={"backend": "claude", "session": "sess-1"}
            )
            assert switched.status_code == 200  # the switch is made through B
            history += [
                {"role": "assistant", "content": "It returns 42."},
                {"role": "user", "content": "Quote it again."},
            ]
            post_messages(url_a, history)  # A sees B's switch: the first request to claude
            post_messages(url_b, history)  # the same request through B
            history += [
                {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
                {"role": "user", "content": "Thanks."},
            ]
            post_messages(url_b, history)  # a later one through B
    assert len(openai_up.requests) == 1  # only the request before the switch
    via_a, via_b, later = (r.json() for r in anthropic_up.requests)
    # A and B rewrite the same history to the same bytes (one summary, kept in Redis)...
    assert compact_json(via_a["messages"]) == compact_json(via_b["messages"])
    assert compact_json(via_a["system"]) == compact_json(via_b["system"])
    # ...and a later request's prefix is byte-identical to them.
    n = len(via_a["messages"])
    assert compact_json(later["messages"][:n]) == compact_json(via_a["messages"])
    assert len(later["messages"]) == n + 2
    block = message_text(via_a["messages"][0]["content"])
    assert block.startswith("[TOOLWIRE HANDOFF]")
    assert FILE_TEXT in block  # the file read before the switch, verbatim


def test_cli_switch_through_one_proxy_routes_the_other(tmp_path: Path, redis_url: str) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=anthropic_text_stream("hello")))
        settings_a, settings_b = _two_settings(tmp_path, openai_up.url, anthropic_up.url, redis_url)
        with running(settings_a) as url_a, running(settings_b) as url_b:
            done = switch_cli(url_a, tmp_path / "a" / "config.toml", "claude", "sess-1")
            assert done.returncode == 0, done.stderr
            body = request_body([{"role": "user", "content": "hi"}], stream=True)
            reply = httpx2.post(f"{url_b}/v1/messages", json=body, timeout=10)
        assert b"hello" in reply.content
        assert openai_up.requests == []
        assert len(anthropic_up.requests) == 1


def _two_settings(
    tmp_path: Path, openai_url: str, anthropic_url: str, redis_url: str
) -> tuple[ProxySettings, ProxySettings]:
    """The settings of two proxies (each its own config file) sharing one Redis."""
    found = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        extra = f'store = "{redis_url}"'
        found.append(settings_for(tmp_path / name, openai_url, anthropic_url, extra))
    return found[0], found[1]

"""Two ``toolwire proxy`` processes on one Redis, and a restart of one, send what a single
process sends.

A fixed Claude-Code-shaped session (prompts, file reads big enough that ``local``'s
small window is compacted, ``/control/switch`` both ways) is served step by step by two
real ``python -m toolwire proxy serve`` processes sharing one real ``redis-server``,
alternating between them, one of them stopped and started again midway. The same steps
served by one process on the memory store that never restarts are the reference: every
upstream body must be byte-identical to the reference's.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.support import grow, request_body, windowed_config
from tests.proxy.test_conversation_property import SESSION, WINDOW, _answer, _diff
from tests.proxy.test_redis import redis_server, redis_url  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("redis-server")]

# (kind, argument, who serves it): "a" or "b", or "restart" (a is stopped and started
# again, then serves it). Kinds as in test_conversation_property.py.
STEPS: list[tuple[str, Any, str]] = [
    ("prompt", 1, "a"),
    ("read", 6_000, "b"),
    ("read", 12_000, "a"),  # local's window overflows: compacted
    ("prompt", 2, "b"),
    ("switch", "claude", "a"),
    ("prompt", 3, "b"),  # the switch made through a, applied by b
    ("read", 300, "restart"),
    ("switch", "local", "b"),
    ("read", 12_000, "a"),
    ("prompt", 4, "b"),
    ("read", 6_000, "restart"),
    ("prompt", 5, "a"),
    ("prompt", 6, "b"),
]


_COMPACTIONS = 'toolwire_proxy_compactions_total{backend="local"}'


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Process:
    """``python -m toolwire proxy serve --config CONFIG`` on a free loopback port."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config, self.log = config, log
        self.url = ""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        port = _free_port()
        argv = ["-m", "toolwire", "proxy", "serve", "--config", str(self.config)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *argv, "--port", str(port)], stdout=log, stderr=log
            )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "the proxy did not start in 30 s"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


@contextmanager
def _processes(config: Path, *names: str) -> Iterator[dict[str, _Process]]:
    found = {name: _Process(config, config.parent / f"{name}.log") for name in names}
    try:
        for process in found.values():
            process.start()
        yield found
    finally:
        for process in found.values():
            process.stop()


def _serve(processes: dict[str, _Process], steps: list[tuple[str, Any, str]]) -> None:
    """Send ``steps`` to the processes they name, as Claude Code would, in order."""
    history: list[dict[str, Any]] = []
    for n, (kind, arg, who) in enumerate(steps):
        if who == "restart":
            processes["a"].stop()
            processes["a"].start()
            who = "a"
        url = processes[who].url
        if kind == "switch":
            data = {"backend": arg, "session": SESSION}
            reply = httpx2.post(f"{url}/control/switch", json=data, timeout=10)
            assert reply.status_code == 200, reply.text
            continue
        grow(history, kind, arg, n)
        body = request_body(history, max_tokens=2_000)
        reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=30)
        assert reply.status_code == 200, reply.text
        history.append({"role": "assistant", "content": reply.json()["content"]})


def test_two_processes_on_one_redis_and_a_restart_send_the_same_bytes(
    tmp_path: Path,
    redis_url: str,  # noqa: F811 (a fixture)
) -> None:
    with FakeServer(respond=_answer) as upstream:
        (tmp_path / "alone").mkdir()
        (tmp_path / "shared").mkdir()
        alone = windowed_config(tmp_path / "alone", upstream.url, local=WINDOW)
        shared = windowed_config(
            tmp_path / "shared", upstream.url, local=WINDOW, extra=f'store = "{redis_url}"'
        )
        with _processes(alone, "a") as reference:
            _serve(reference, [(kind, arg, "a") for kind, arg, _ in STEPS])
            metrics = httpx2.get(f"{reference['a'].url}/metrics", timeout=5).text
        expected = [r.body for r in upstream.requests]
        with _processes(shared, "a", "b") as pair:
            _serve(pair, STEPS)
        got = [r.body for r in upstream.requests[len(expected) :]]
    # The sequence did what it says: local's window compacted, and both backends served.
    (compactions,) = [line for line in metrics.splitlines() if line.startswith(_COMPACTIONS)]
    assert float(compactions.split()[-1]) >= 1
    assert any(r.path.endswith("/chat/completions") for r in upstream.requests)
    assert any(r.path.endswith("/v1/messages") for r in upstream.requests)
    assert len(got) == len(expected) == sum(1 for kind, _, _ in STEPS if kind != "switch")
    for n, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
        assert mine == theirs, f"upstream request {n} differs: {_diff(mine, theirs)}"

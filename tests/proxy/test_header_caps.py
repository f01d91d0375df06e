"""Header size and time are capped before any key is checked (``toolwire.proxy.serving``):
a client without a key sending endless or huge headers gets 431 and is disconnected
after ``max_header_bytes``, so it cannot grow the proxy's memory. Raw sockets against
the proxy on uvicorn, and a real ``toolwire proxy serve`` process whose memory is read."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.support import request_body, running, settings_for, write_config

BOUND = 6.0
CAP = 16 * 1024


@contextmanager
def _proxy(tmp_path: Path, extra: str = "") -> Iterator[tuple[str, int]]:
    settings = settings_for(tmp_path, "http://a", "http://b", f"max_header_bytes = {CAP}\n{extra}")
    with running(settings) as url:
        host, _, port = url.removeprefix("http://").partition(":")
        yield host, int(port)


def _flood(address: tuple[str, int], total: int, piece: int = 64 * 1024) -> tuple[bytes, int]:
    """Send a request line and one header value that never ends, up to ``total`` bytes;
    what the server answered and how many bytes were sent before it stopped reading."""
    sent = 0
    with socket.create_connection(address) as sock:
        sock.settimeout(BOUND)
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Filler: ")
        try:
            while sent < total:
                sock.sendall(b"a" * piece)
                sent += piece
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed the connection: what it answered is read below
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
    return received, sent


def test_endless_headers_get_a_431_after_the_cap(tmp_path: Path) -> None:
    with _proxy(tmp_path) as address:
        received, sent = _flood(address, 32 * 1024 * 1024)
    status, _, rest = received.partition(b"\r\n")
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    error = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert error["error"]["type"] == "request_too_large"
    assert "max_header_bytes" in error["error"]["message"]
    assert sent < 32 * 1024 * 1024  # the proxy stopped reading long before


def test_headers_over_the_cap_sent_at_once_get_a_431(tmp_path: Path) -> None:
    many = b"".join(b"X-H%d: %s\r\n" % (n, b"v" * 100) for n in range(200))  # 21 KB
    with _proxy(tmp_path) as address, socket.create_connection(address) as sock:
        sock.settimeout(BOUND)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
        received = sock.recv(65536)
    assert received.startswith(b"HTTP/1.1 431 ")


def test_headers_under_the_cap_and_bodies_over_it_are_served(tmp_path: Path) -> None:
    body = request_body([{"role": "user", "content": "x" * 1_000_000}])
    with _proxy(tmp_path) as (host, port):
        url = f"http://{host}:{port}"
        reply = httpx2.get(f"{url}/healthz", headers={"x-big": "v" * 12000})
        counted = [httpx2.post(f"{url}/v1/messages/count_tokens", json=body) for _ in range(2)]
    assert reply.status_code == 200
    assert [r.status_code for r in counted] == [200, 200]


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc for memory")
def test_six_keyless_clients_with_48_mb_of_headers_do_not_grow_the_proxy(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        config = write_config(tmp_path, upstream.url, upstream.url, 'token = "secret"')
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        argv = [sys.executable, "-m", "toolwire", "proxy", "serve", "--config", str(config)]
        process = subprocess.Popen([*argv, "--port", str(port)], stderr=subprocess.DEVNULL)
        try:
            _wait_healthy(port, process)
            before = _rss(process.pid)
            with ThreadPoolExecutor(6) as pool:
                floods = list(pool.map(_flood, [("127.0.0.1", port)] * 6, [48 << 20] * 6))
            grown = _rss(process.pid) - before
        finally:
            process.terminate()
            process.wait(timeout=15)
    assert all(received.startswith(b"HTTP/1.1 431 ") for received, _ in floods)
    assert grown < 20 * 1024 * 1024, f"the proxy grew by {grown >> 20} MB"


def _wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert process.poll() is None, "the proxy exited"
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        assert time.monotonic() < deadline, "the proxy did not start in 30 s"
        time.sleep(0.05)

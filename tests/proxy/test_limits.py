"""Read deadlines and the connection cap (``toolwire.proxy.serving``): slow and half-open
clients are disconnected, and ``/healthz`` answers while the cap is reached.

The deadlines are set to 1 s and each check waits for at most the deadline plus 5 s: no
assertion depends on how fast this machine is.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.fakes.http import FakeServer
from tests.proxy.support import request_body, running, settings_for
from toolwire.config.schema import ConfigError
from toolwire.proxy import serving

BOUND = 1 + 5  # the deadline (1 s) plus a generous margin


@contextmanager
def _proxy(tmp_path: Path, extra: str) -> Iterator[tuple[str, int]]:
    with (
        FakeServer() as upstream,
        running(settings_for(tmp_path, upstream.url, upstream.url, extra)) as url,
    ):
        host, _, port = url.removeprefix("http://").partition(":")
        yield host, int(port)


def _closed_within(sock: socket.socket, seconds: float) -> bytes:
    """Everything the server sends until it closes the connection (fails past ``seconds``)."""
    sock.settimeout(seconds)
    received = b""
    while chunk := sock.recv(65536):  # socket.timeout (a failure) if the server holds on
        received += chunk
    return received


def test_a_client_that_sends_nothing_is_disconnected(tmp_path: Path) -> None:
    with (
        _proxy(tmp_path, "header_timeout = 1") as address,
        socket.create_connection(address) as sock,
    ):
        assert _closed_within(sock, BOUND) == b""


@pytest.mark.parametrize(
    "sent", [b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n", b"GET /healthz HTTP/1.1\r\nHo"]
)
def test_a_client_that_never_finishes_its_headers_gets_a_408(tmp_path: Path, sent: bytes) -> None:
    with (
        _proxy(tmp_path, "header_timeout = 1") as address,
        socket.create_connection(address) as sock,
    ):
        sock.sendall(sent)
        received = _closed_within(sock, BOUND)
    status, _, rest = received.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout"
    error = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert error["error"]["type"] == "timeout_error"
    assert "header_timeout" in error["error"]["message"]


def test_a_kept_alive_connection_gets_the_header_deadline_again(tmp_path: Path) -> None:
    with (
        _proxy(tmp_path, "header_timeout = 1\nkeep_alive_timeout = 60") as address,
        socket.create_connection(address) as sock,
    ):
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\n")
        received = _closed_within(sock, BOUND)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert received.count(b"HTTP/1.1 200 ") == 1
    assert b"HTTP/1.1 408 " in received  # the second request's headers never ended


def test_a_body_that_stops_coming_gets_a_408_and_the_connection_closed(tmp_path: Path) -> None:
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    with _proxy(tmp_path, "body_timeout = 1") as address, socket.create_connection(address) as sock:
        sock.sendall(head + b'{"model": ')
        received = _closed_within(sock, BOUND)
    status, _, rest = received.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 408 ")
    error = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert error["type"] == "error"
    assert error["error"]["type"] == "timeout_error"
    assert "body_timeout" in error["error"]["message"]


@pytest.mark.slow  # about 2 s: the deadline plus its grace
def test_a_body_no_endpoint_reads_still_has_a_deadline(tmp_path: Path) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    with (
        _proxy(tmp_path, "body_timeout = 1\nkeep_alive_timeout = 60") as address,
        socket.create_connection(address) as sock,
    ):
        sock.sendall(head + b"abc")
        received = _closed_within(sock, BOUND + serving.BODY_GRACE)
    assert received.startswith(b"HTTP/1.1 200 ")


def _held(stack: ExitStack, address: tuple[str, int]) -> socket.socket:
    """A connection the server has accepted (it answered on it), then left idle."""
    sock = stack.enter_context(socket.create_connection(address))
    sock.settimeout(BOUND)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
    return sock


def test_healthz_answers_while_the_connection_cap_is_held(tmp_path: Path) -> None:
    extra = "max_connections = 3\nkeep_alive_timeout = 60"
    with _proxy(tmp_path, extra) as address, ExitStack() as stack:
        url = "http://{}:{}".format(*address)
        held = [_held(stack, address) for _ in range(3)]
        health = httpx2.get(f"{url}/healthz", timeout=BOUND)
        body = request_body([{"role": "user", "content": "x"}])
        refused = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=BOUND)
        held.pop().close()  # a slot frees: requests are served again
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            again = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=BOUND)
            if again.status_code != 529:
                break
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert refused.status_code == 529
    assert refused.json()["error"]["type"] == "overloaded_error"
    assert "max_connections" in refused.json()["error"]["message"]
    assert again.status_code == 200


def test_past_the_health_reserve_a_connection_is_closed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serving, "HEALTH_RESERVE", 1)
    extra = "max_connections = 2\nkeep_alive_timeout = 60\nheader_timeout = 60"
    with _proxy(tmp_path, extra) as address, ExitStack() as stack:
        for _ in range(3):  # the cap, and the one connection of the health reserve
            _held(stack, address)
        with socket.create_connection(address) as sock:
            assert _closed_within(sock, BOUND) == b""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("header_timeout = 0", r"proxy.header_timeout must be"),
        ("body_timeout = -1.5", r"proxy.body_timeout must be"),
        ("keep_alive_timeout = 'x'", r"proxy.keep_alive_timeout must be"),
        ("max_connections = 0", r"proxy.max_connections must be a positive integer, got 0$"),
    ],
)
def test_limit_settings_are_validated(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_for(tmp_path, "http://a", "http://b", text)


def test_limit_settings_defaults_and_values(tmp_path: Path) -> None:
    default = settings_for(tmp_path, "http://a", "http://b")
    assert (default.header_timeout, default.body_timeout) == (10.0, 60.0)
    assert (default.keep_alive_timeout, default.max_connections) == (5, 256)
    extra = "header_timeout = 2.5\nbody_timeout = 30\nkeep_alive_timeout = 7\nmax_connections = 9"
    chosen = settings_for(tmp_path, "http://a", "http://b", extra)
    assert (chosen.header_timeout, chosen.body_timeout) == (2.5, 30.0)
    assert (chosen.keep_alive_timeout, chosen.max_connections) == (7, 9)
    http = serving.uvicorn_options(chosen)["http"]
    assert (http.header_timeout, http.body_timeout, http.max_connections) == (2.5, 30.0, 9)

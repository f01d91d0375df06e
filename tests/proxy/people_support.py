"""Helpers for the tests of keys, budgets and the ledger: a priced config, an Anthropic
upstream that reports chosen usage, the proxy served in this process."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

from tests.fakes.http import FakeServer, Received, Reply, sse
from tests.proxy.support import serving
from toolwire.proxy import Proxy, ProxySettings, create_app, load_settings

# Dollars per million tokens: a token of output costs 100 micro-dollars, so 1,000
# tokens of max_tokens are $0.10.
PRICES = "{ input = 2.0, output = 100.0, cache_read = 0.5, cache_write = 4.0 }"


def priced_config(tmp: Path, upstream: str, extra: str = "", prices: str = PRICES) -> Path:
    """Backends ``claude`` (Anthropic, priced) and ``other`` (the same upstream, priced),
    ``[proxy]`` with ``extra``."""
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_backend = "claude"
[backends.claude]
provider = "anthropic"
base_url = "{upstream}"
model = "claude-up"
price_per_mtok = {prices}
[backends.other]
provider = "anthropic"
base_url = "{upstream}"
model = "other-up"
price_per_mtok = {prices}
[limits]
max_retries = 1
read_timeout = 10.0
[proxy]
default_backend = "claude"
{extra}
""",
        encoding="utf-8",
    )
    return path


def usage_stream(
    usage: dict[str, int], *, output: int, text: str = "ok", cut: bool = False
) -> list[bytes]:
    """An Anthropic stream whose ``message_start`` reports ``usage`` and whose
    ``message_delta`` reports ``output`` tokens; ``cut``: it stops after the text."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-up",
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", start),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
    ]  # fmt: skip
    if not cut:
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": output}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
    return [sse([e]) for e in events]


def answering(
    usage: dict[str, int], output: int, delay: float = 0.0
) -> Callable[[Received], Reply]:
    """A fake upstream's ``respond``: every request answered with ``usage_stream``."""

    def respond(received: Received) -> Reply:
        return Reply(chunks=usage_stream(usage, output=output), chunk_delay=delay)

    return respond


@contextmanager
def served(settings: ProxySettings) -> Iterator[tuple[str, Proxy]]:
    """The proxy on uvicorn on a free loopback port, with its lifespan (the ledger is
    flushed when it stops); yields its URL and the ``Proxy``."""
    app = create_app(settings)
    with serving(app, settings, lifespan="on") as url:
        yield url, app.state.proxy


def wait_for(check: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll ``check`` until it holds (the ledger's writer works off the request path)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.02)


@contextmanager
def proxied(
    tmp: Path, respond: Callable[[Received], Reply], extra: str = ""
) -> Iterator[tuple[str, Proxy, FakeServer]]:
    """A fake upstream answering with ``respond`` and the proxy in front of it."""
    with FakeServer(respond=respond) as upstream:
        settings = load_settings(priced_config(tmp, upstream.url, extra))
        with served(settings) as (url, proxy):
            yield url, proxy, upstream


# ``python -m toolwire`` in a process whose clock is ``{shift}`` seconds ahead: every
# ``time.time()`` of the process (the replica's own clock) is shifted.
_SHIFTED = (
    "import sys, time; _real = time.time; time.time = lambda: _real() + {shift}; "
    "sys.argv[0] = 'toolwire'; from toolwire.cli import main; main()"
)


@contextmanager
def replicas(config: Path, count: int, shifts: Sequence[float] = ()) -> Iterator[list[str]]:
    """``count`` ``python -m toolwire proxy serve`` processes on ``config``, each on a
    free loopback port, started and answering ``/healthz``; yields their URLs.
    ``shifts``: seconds each replica's clock is ahead of the real one (0: none)."""
    started: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for n in range(count):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            shift = shifts[n] if n < len(shifts) else 0.0
            start = ["-c", _SHIFTED.format(shift=shift)] if shift else ["-m", "toolwire"]
            argv = [sys.executable, *start, "proxy", "serve", "--config", str(config)]
            with (config.parent / f"replica{n}.log").open("ab") as log:
                started.append(
                    subprocess.Popen([*argv, "--port", str(port)], stdout=log, stderr=log)
                )
            urls.append(f"http://127.0.0.1:{port}")
        for process, url in zip(started, urls, strict=True):
            deadline = time.monotonic() + 30
            while not _healthy(url):
                assert process.poll() is None, "a proxy process exited"
                assert time.monotonic() < deadline, "a proxy did not start in 30 s"
                time.sleep(0.05)
        yield urls
    finally:
        for process in started:
            process.terminate()  # SIGTERM: uvicorn's shutdown flushes the ledger
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _healthy(url: str) -> bool:
    try:
        return httpx2.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx2.TransportError:
        return False

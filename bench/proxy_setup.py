"""Benchmark: the CPU one streamed request costs `toolwire proxy` before its stream starts.

``bench/proxy.py --dialects`` starts a hundred streams at once, and every request's
set-up (reading and checking the body, importing the dialect, keys, budgets, routing,
the session, the upstream body, telemetry...) runs with nothing awaited: the open
streams' events wait behind it (docs/proxy.md, "Many streams"). This measures that
set-up alone, per dialect, as CPU time (``time.process_time``: the machine is shared,
wall time would measure the neighbours).

The proxy app is built in this process as ``toolwire proxy`` builds it, from the same
config as ``bench/proxy.py`` (one OpenAI-Chat backend ``local``, an open proxy, the
memory store), and called directly through ASGI, one request at a time, so the CPU
between two marks is this request's alone. The upstream is an HTTP transport in this
process that answers at once with a short chat-completions stream (no sockets). Per
request:

* ``before send``: from the ASGI call to the moment the upstream request reaches the
  transport (the body read and checked, the plan, the upstream request built);
* ``after``: from there to the response's status line (the first upstream event
  decoded, the response and its stream wrappers made);
* ``set-up`` is the two together: what the loop runs for a new request before its
  stream starts.

After ``--warmup`` requests per dialect (caches, first-call imports), the heap is frozen
as ``toolwire proxy serve`` freezes it (``serving.settle_heap``), then ``-n`` requests
are measured; the table gives the median and mean per request. ``--repeat`` measures
the whole table that many times. ``--profile`` runs cProfile over the measured requests' set-ups
(from the ASGI call to the status line) instead and prints the top functions by own and
cumulative time, per dialect.

Run: ``.venv/bin/python bench/proxy_setup.py [-n 500] [--repeat 3] [--dialects ...]
[--profile [--top 30]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from toolwire.proxy import create_app, load_settings

CONFIG = """default_backend = "local"
[backends.local]
provider = "openai-chat"
base_url = "http://127.0.0.1:9/v1"
model = "qwen3"
[limits]
read_timeout = 60.0
[proxy]
default_backend = "local"
"""

MESSAGES = [{"role": "user", "content": "count"}]
# One entry per dialect: the path and the body bench/proxy.py sends (model "local").
DIALECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": (
        "/v1/messages",
        {"model": "local", "max_tokens": 4096, "stream": True, "messages": MESSAGES},
    ),
    "chat": (
        "/v1/chat/completions",
        {
            "model": "local",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": MESSAGES,
        },
    ),
    "responses": (
        "/v1/responses",
        {"model": "local", "stream": True, "store": False, "input": "count"},
    ),
    "gemini": (
        "/v1beta/models/local:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "count"}]}]},
    ),
}


def _chunk(delta: dict[str, Any], finish: str | None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    obj = {"id": "c", "object": "chat.completion.chunk", "model": "qwen3", "choices": [choice]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


# One network read per event, as a paced upstream sends them: the first read holds the
# first event only, and the set-up decodes just that.
UPSTREAM = (
    _chunk({"role": "assistant", "content": "0:0|"}, None),
    _chunk({"content": "1:0|"}, None),
    _chunk({}, "stop"),
    b"data: [DONE]\n\n",
)


class Reads(httpx2.AsyncByteStream):
    """The upstream's body, one event per read."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in UPSTREAM:
            yield piece


@dataclass
class Marks:
    """The CPU clock at the marks of the request in flight."""

    sent: float = 0.0
    started: float = 0.0
    profiler: cProfile.Profile | None = None
    """Enabled for each request's set-up only (``--profile``)."""


class Upstream(httpx2.AsyncBaseTransport):
    """Answers every request at once with ``UPSTREAM``, marking when it was sent."""

    def __init__(self, marks: Marks) -> None:
        self.marks = marks

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.marks.sent = time.process_time()
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, headers=headers, stream=Reads())


@dataclass
class Sample:
    before: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)

    def add(self, start: float, marks: Marks) -> None:
        self.before.append(marks.sent - start)
        self.after.append(marks.started - marks.sent)


def _scope(path: str, body: bytes) -> dict[str, Any]:
    route, _, query = path.partition("?")
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }


async def one(app: Any, marks: Marks, path: str, body: bytes) -> float:
    """One request through the app; returns the CPU clock at its start."""
    done = asyncio.Event()
    sent_body = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            marks.started = time.process_time()
            if marks.profiler is not None:
                marks.profiler.disable()
            status = message["status"]
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    if marks.profiler is not None:
        marks.profiler.enable()
    start = time.process_time()
    await app(_scope(path, body), receive, send)
    if status != 200:
        raise SystemExit(f"{path}: HTTP {status}; the proxy refused the bench's request")
    return start


async def measure(app: Any, marks: Marks, dialect: str, n: int) -> Sample:
    path, body = DIALECTS[dialect]
    data = json.dumps(body).encode()
    sample = Sample()
    for _ in range(n):
        sample.add(await one(app, marks, path, data), marks)
    return sample


def build(tmp: Path) -> tuple[Any, Marks]:
    config = tmp / "toolwire.toml"
    config.write_text(CONFIG, encoding="utf-8")
    app = create_app(load_settings(str(config)), telemetry=None)
    marks = Marks()
    app.state.proxy.client = httpx2.AsyncClient(transport=Upstream(marks))
    return app, marks


def us(values: list[float], how: Callable[[list[float]], float]) -> str:
    return f"{how(values) * 1e6:8.1f}"


def _p10(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[0]


def table(rows: dict[str, Sample]) -> str:
    """Median and mean of each part; the set-up's 10th percentile too, the figure least
    moved by what else the machine runs (a busy neighbour only ever adds CPU time)."""
    lines = [
        "| dialect | before send µs (median / mean) | after µs | set-up µs | set-up p10 µs |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, s in rows.items():
        total = [a + b for a, b in zip(s.before, s.after, strict=True)]
        cells = [
            f"{us(v, statistics.median).strip()} / {us(v, statistics.fmean).strip()}"
            for v in (s.before, s.after, total)
        ]
        cells.append(us(total, _p10).strip())
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    names = args.dialects.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        app, marks = build(Path(tmp))
        for name in names:
            await measure(app, marks, name, args.warmup)
        gc.collect()
        gc.freeze()
        if args.profile:
            for name in names:
                profile(await _profiled(app, marks, name, args.n), name, args.top)
            return
        for i in range(args.repeat):
            rows = {name: await measure(app, marks, name, args.n) for name in names}
            print(f"\nround {i + 1}: {args.n} requests per dialect, CPU per request")
            print(table(rows))


async def _profiled(app: Any, marks: Marks, name: str, n: int) -> cProfile.Profile:
    marks.profiler = prof = cProfile.Profile()
    await measure(app, marks, name, n)
    marks.profiler = None
    return prof


def profile(prof: cProfile.Profile, name: str, top: int) -> None:
    for key in ("tottime", "cumtime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(key).print_stats(top)
        print(f"\n===== {name}: by {key} =====")
        print(out.getvalue().split("\n", 4)[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=500, help="measured requests per dialect")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=35)
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(run(args))
    else:
        uvloop.run(run(args))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

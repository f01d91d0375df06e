"""Benchmark: `toolwire proxy` relaying streams, next to the LiteLLM proxy.

Everything runs on 127.0.0.1, each server in its own process:

* a fake OpenAI-Chat upstream (a raw asyncio HTTP/1.1 server, this file with
  ``--serve-upstream``) answering ``POST /v1/chat/completions`` with ``--events``
  ``chat.completion.chunk`` events, one text delta each: ``"<seq>:<monotonic_ns>|"``,
  the sequence number and the time the upstream wrote the event;
* ``toolwire proxy`` with a temporary config whose only backend is that upstream
  (``provider = "openai-chat"``);
* the LiteLLM proxy (``litellm[proxy]``, from its own venv, ``--litellm``) with a
  ``config.yaml`` routing model ``bench`` to the same upstream (``openai/qwen3``), with
  ``LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES`` set: otherwise its
  ``/v1/messages`` sends ``openai/`` models to the Responses API, which the upstream
  (like most OpenAI-compatible servers) does not have. Its defaults otherwise: one
  worker, no database.

Both proxies are asked the same way: ``POST /v1/messages`` (Anthropic Messages API,
``stream: true``), and both answer with Anthropic SSE ``text_delta`` events. The client
(this process, a minimal HTTP/1.1 client on raw asyncio streams, one connection per
stream, on uvloop like the upstream and the proxy) stamps each network read with
``time.monotonic_ns()`` (CLOCK_MONOTONIC is shared by all processes) and splits the
concatenated text back into ``seq:sent`` tokens, so it does not matter whether a proxy
merges or splits deltas. The client is the same for the direct and the proxied runs; it
is lean (earlier versions used httpx2, whose own cost per event, on the 2 cores the
proxy shares, dominated the direct baseline: p50 8 ms at 100 streams) so that what is
measured is the proxy.

Two phases per concurrency (1, 10, 100 streams):

* latency: the upstream paces each stream (``--gap-ms`` between events, so the load
  is steady rather than a saturation test), on a fixed schedule from a random offset
  within the first gap, so streams are not phase-locked (real streams are independent;
  ``--phase-locked`` puts every stream on one shared grid instead, all writing in the
  same instant, the worst case). Added latency = (receive - send) through the proxy
  minus the same measured on a direct connection to the upstream at the same concurrency
  and pacing, for p50 and p99 separately. The paced runs come in ``--rounds`` rounds
  (default 3), direct and toolwire interleaved so that both meet the same machine, and
  each round's toolwire figure is taken against that round's direct one; the table
  gives the median over the rounds and their range. On a shared VM the p99 of even the
  direct runs moves by milliseconds from one run to the next (the hypervisor's steal
  time, printed with the table, is part of why): a single round is not a measurement.
  LiteLLM, orders of magnitude slower, gets one round. Before every run the bench waits
  for both proxy processes to be idle;
* throughput: the upstream writes as fast as it can; events/s = events the clients
  received / wall time from the first request to the last stream's end.

The progress lines also give the proxy's CPU time per relayed event (from /proc).
Every stream of every phase is checked: sequence numbers 0..N-1, complete and in order.
Then a soak: 200 concurrent unpaced streams x 1,000 events through toolwire, nothing may
be lost or reordered.

``--people`` measures toolwire with keys, budgets and a ledger on (``toolwire+keys``: every
request authenticated, reserved, settled and written to a SQLite ledger) beside plain
toolwire instead of LiteLLM.

``--transports lean,httpx2`` measures toolwire's upstream HTTP path instead of LiteLLM:
one toolwire proxy per path (this file with ``--serve-toolwire``: the proxy as
``toolwire proxy`` serves it, its lifespan's client made with ``http_client(lean=...)``),
all interleaved in every round, the unpaced runs too; the table then gives each path and
the ratios. Targets: p99 added latency < 2 ms at 100 streams; at least 3x
LiteLLM's events/s; a clean soak.

``--dialects anthropic,chat,responses`` is the dialect axis instead: one
toolwire proxy asked on each client dialect it serves (``DIALECTS``: Anthropic
``/v1/messages``, OpenAI Chat ``/v1/chat/completions``, OpenAI Responses
``/v1/responses``, Gemini ``:streamGenerateContent``; one entry each, a dialect this
toolwire does not serve is skipped with a line), and LiteLLM on each it serves from the
same upstream (its Responses bridged to chat/completions with ``use_chat_completions_api``),
all in the same interleaved rounds against one direct baseline; then a soak per dialect,
and toolwire's memory per open stream on each: the rise of a fresh proxy's RSS with
``--memory-streams`` slow streams open, over their number. Targets: at least 10x
LiteLLM's events/s on every dialect it serves; added p99 at most 1 ms at 1 stream and
2 ms at 100 paced streams; memory per open stream within 1.5x of the Anthropic path's.
``--quick`` is a reduced size (200 events per stream, 2 rounds, a 100-stream soak).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HOST = "127.0.0.1"
DEFAULT_LITELLM = "/tmp/litellm-venv/bin/litellm"
# The key of the one person of ``--people`` (only ever on 127.0.0.1).
PEOPLE_KEY = "tw-bench-" + "0" * 40
PHASE_TIMEOUT = 600.0  # seconds; every phase ends by itself well before this


# --------------------------------------------------------------------------- upstream


class Upstream:
    """The fake OpenAI-Chat server; ``gap`` (seconds between events) is set by /control."""

    def __init__(self, events: int, *, phase_locked: bool) -> None:
        self.events = events
        self.phase_locked = phase_locked
        self.gap = 0.0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])
        }
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
        if path.startswith("/control"):
            self.gap = float(json.loads(body)["gap_ms"]) / 1000
            await self._plain(writer, b'{"ok":true}')
        elif method == "POST" and path.endswith("/chat/completions"):
            await self._stream(writer)
        else:
            await self._plain(writer, b'{"object":"list","data":[]}')
        return headers.get("connection", "").lower() != "close"

    async def _plain(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        gap, loop = self.gap, asyncio.get_running_loop()
        # Paced streams keep a fixed schedule (no drift): event k at ``start + k * gap``.
        # Phase-locked, every stream's schedule is the same global grid, so all streams
        # write in the same instant; otherwise each starts at a random point of its first
        # gap, as independent real streams do.
        now = loop.time()
        if self.phase_locked:
            start = (now // gap + 1) * gap if gap else now
        else:
            start = now + random.uniform(0, gap)
        for seq in range(self.events):
            if gap:
                await asyncio.sleep(start + seq * gap - loop.time())
            delta = {"content": f"{seq}:{time.monotonic_ns()}|"}
            if seq == 0:
                delta["role"] = "assistant"
            _chunk(writer, _chat_chunk(delta, None))
            if not gap:
                await writer.drain()
        _chunk(writer, _chat_chunk({}, "stop"))
        usage = {
            "prompt_tokens": 5,
            "completion_tokens": self.events,
            "total_tokens": self.events + 5,
        }
        _chunk(writer, {**_chat_chunk({}, None), "choices": [], "usage": usage})
        writer.write(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
        await writer.drain()


def _chat_chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "qwen3",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chunk(writer: asyncio.StreamWriter, payload: dict[str, Any]) -> None:
    data = b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
    writer.write(b"%x\r\n%s\r\n" % (len(data), data))


def serve_upstream(port: int, events: int, *, phase_locked: bool) -> None:
    async def main() -> None:
        up = Upstream(events, phase_locked=phase_locked)
        server = await asyncio.start_server(up.handle, HOST, port, backlog=1024)
        async with server:
            await server.serve_forever()

    run(main())


def serve_toolwire(port: int, config: str, *, lean: bool) -> None:
    """The proxy as ``toolwire proxy`` serves it, its client on one HTTP path."""
    from contextlib import asynccontextmanager

    import uvicorn

    from toolwire.backends import http_client
    from toolwire.proxy import create_app, load_settings

    app = create_app(load_settings(config))
    proxy = app.state.proxy

    @asynccontextmanager
    async def lifespan(_: object) -> Any:
        async with http_client(lean=lean) as proxy.client:
            yield

    app.router.lifespan_context = lifespan
    uvicorn.run(app, host=HOST, port=port, log_level="warning")


def serve_people(port: int, config: str) -> None:
    """The proxy as ``toolwire proxy`` serves it, with one person's key (``PEOPLE_KEY``)
    and budgets for the person and the team (large enough never to refuse): every request
    is authenticated, reserved, settled and written to the config's SQLite ledger."""
    import time as clock

    import uvicorn

    from toolwire.proxy import create_app, load_settings
    from toolwire.proxy.people.keys import KeyRecord, digest, parse_budget
    from toolwire.proxy.serving import uvicorn_options

    settings = load_settings(config)
    app = create_app(settings)
    accounts = app.state.proxy.people.accounts
    now = clock.time()
    accounts.add(KeyRecord("key_bench", digest(PEOPLE_KEY), "bench", "bench", (), now))
    for subject in ("user:bench", "team:bench"):
        accounts.set_budget(subject, parse_budget("1000000usd/30d", now))
    uvicorn.run(app, host=HOST, port=port, log_level="warning", **uvicorn_options(settings))


def run(main: Coroutine[Any, Any, int | None]) -> Any:
    """``asyncio.run`` on uvloop when installed (the proxy's own loop): the client and
    the upstream share the 2 cores with the proxy, so the cheaper loop disturbs less."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


# --------------------------------------------------------------------------- client


@dataclass
class Stream:
    """What one client stream saw: its sequence numbers and latencies (ns), in arrival order."""

    latencies: list[int] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)
    error: str | None = None


Texts = Callable[[dict[str, Any]], str]


def anthropic_text(obj: dict[str, Any]) -> str:
    if obj.get("type") == "content_block_delta" and obj["delta"].get("type") == "text_delta":
        return str(obj["delta"]["text"])
    return ""


def chat_text(obj: dict[str, Any]) -> str:
    return "".join((c.get("delta") or {}).get("content") or "" for c in obj.get("choices", []))


def responses_text(obj: dict[str, Any]) -> str:
    return str(obj["delta"]) if obj.get("type") == "response.output_text.delta" else ""


def gemini_text(obj: dict[str, Any]) -> str:
    parts = [
        p for c in obj.get("candidates", []) for p in (c.get("content") or {}).get("parts", [])
    ]
    return "".join(str(p["text"]) for p in parts if "text" in p and not p.get("thought"))


def _texts(line: bytes, texts: Texts) -> str:
    if not line.startswith(b"data:"):
        return ""
    data = line[5:].strip()
    if not data or data == b"[DONE]":
        return ""
    obj = json.loads(data)
    # Every dialect's error event: Anthropic's and Responses' by type, OpenAI Chat's and
    # Google's as a top-level ``error`` member.
    if obj.get("type") in ("error", "response.failed") or obj.get("error"):
        raise RuntimeError(f"error event: {obj}")
    return texts(obj)


class Dechunker:
    """Incremental HTTP/1.1 chunked transfer decoding: ``feed`` returns the body bytes."""

    def __init__(self) -> None:
        self.buf = b""
        self.left = 0  # bytes of the current chunk still to come (+2 for its CRLF)
        self.done = False

    def feed(self, data: bytes) -> bytes:
        self.buf += data
        out = []
        while self.buf:
            if self.left:
                take = self.buf[: self.left]
                self.buf = self.buf[len(take) :]
                self.left -= len(take)
                out.append(take[: max(0, len(take) - max(0, 2 - self.left))])
                continue
            line, sep, rest = self.buf.partition(b"\r\n")
            if not sep:
                break
            size = int(line.split(b";")[0], 16)
            self.buf = rest
            if size == 0:
                self.done = True
                break
            self.left = size + 2
        return b"".join(out)


async def one_stream(target: Target) -> Stream:
    """One request on its own connection; the reads are stamped as they return."""
    out = Stream()
    pending, text = b"", ""
    writer = None
    try:
        reader, writer = await asyncio.open_connection(target.host, target.port)
        writer.write(target.request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 200:
            out.error = f"HTTP {status}: {(head + await reader.read(200))[:300]!r}"
            return out
        if b"transfer-encoding: chunked" not in head.lower():
            raise RuntimeError(f"not a chunked response: {head!r}")
        body = Dechunker()
        while not body.done:
            raw = await reader.read(65536)
            now = time.monotonic_ns()
            if not raw:
                raise RuntimeError("the connection closed mid-body")
            pending += body.feed(raw)
            *lines, pending = pending.split(b"\n")
            text += "".join(_texts(ln, target.texts) for ln in lines)
            *tokens, text = text.split("|")
            for tok in tokens:
                seq, _, sent = tok.partition(":")
                out.seqs.append(int(seq))
                out.latencies.append(now - int(sent))
    except Exception as e:  # reported per stream, counted as lost events
        out.error = f"{type(e).__name__}: {e}"
    finally:
        if writer is not None:
            writer.close()
    return out


@dataclass
class Target:
    name: str
    url: str
    body: dict[str, Any]
    headers: dict[str, str]
    texts: Texts = anthropic_text
    pid: int | None = None  # the proxy's process, whose CPU time is reported

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or HOST

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 80

    @property
    def path(self) -> str:
        parts = urlsplit(self.url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    @property
    def request(self) -> bytes:
        body = json.dumps(self.body).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"host: {self.host}:{self.port}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: close",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass
class Run:
    streams: list[Stream]
    seconds: float
    events: int
    cpu: float = 0.0  # CPU seconds the proxy used during the run

    @property
    def cpu_us_per_event(self) -> float:
        return 1e6 * self.cpu / max(1, self.received)

    @property
    def received(self) -> int:
        return sum(len(s.seqs) for s in self.streams)

    @property
    def per_second(self) -> float:
        return self.received / self.seconds

    def bad(self) -> tuple[int, int, list[str]]:
        """(streams with lost events, streams out of order, errors)."""
        lost = sum(1 for s in self.streams if sorted(s.seqs) != list(range(self.events)))
        disordered = sum(1 for s in self.streams if s.seqs != sorted(s.seqs))
        return lost, disordered, [s.error for s in self.streams if s.error]

    def percentile_ms(self, q: float) -> float:
        lat = sorted(x for s in self.streams for x in s.latencies)
        if not lat:
            return float("nan")
        return lat[min(len(lat) - 1, int(q * len(lat)))] / 1e6


async def drive(target: Target, n: int, events: int) -> Run:
    cpu = cpu_seconds(target.pid)
    started = time.monotonic()
    streams = await asyncio.wait_for(
        asyncio.gather(*(one_stream(target) for _ in range(n))), PHASE_TIMEOUT
    )
    seconds = time.monotonic() - started
    return Run(list(streams), seconds, events, cpu_seconds(target.pid) - cpu)


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def set_gap(upstream_port: int, gap_ms: float) -> None:
    reader, writer = await asyncio.open_connection(HOST, upstream_port)
    body = json.dumps({"gap_ms": gap_ms}).encode()
    writer.write(
        b"POST /control HTTP/1.1\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
        % (len(body), body)
    )
    head = await reader.readuntil(b"\r\n\r\n")
    writer.close()
    if b" 200 " not in head.split(b"\r\n")[0]:
        raise RuntimeError(f"/control answered {head!r}")


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}: {tail(log)}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"not listening on port {port} after {seconds:.0f} s: {tail(log)}")


def tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def spawn(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def start_toolwire(
    tmp: Path,
    upstream: int,
    transport: str | None = None,
    *,
    people: bool = False,
    label: str | None = None,
) -> tuple[subprocess.Popen[bytes], Target]:
    """``toolwire proxy``; with ``transport``, this file serving it on that HTTP path;
    ``people``: with a key, budgets and a ledger (``serve_people``); ``label`` names its
    config and log when several plain ones run."""
    name = "toolwire+keys" if people else transport or label or "toolwire"
    config = tmp / f"{name}.toml"
    priced = "price_per_mtok = { input = 3.0, output = 15.0 }\n" if people else ""
    ledger = f'ledger = "{tmp / "spend.db"}"\n' if people else ""
    config.write_text(
        f"""default_backend = "local"
[backends.local]
provider = "openai-chat"
base_url = "http://{HOST}:{upstream}/v1"
model = "qwen3"
{priced}[limits]
read_timeout = 60.0
[proxy]
default_backend = "local"
{ledger}""",
        encoding="utf-8",
    )
    port = free_port()
    exe = Path(sys.executable).parent / "toolwire"
    cmd = [str(exe), "proxy", "--config", str(config), "--host", HOST, "--port", str(port)]
    if transport is not None:
        cmd = [sys.executable, __file__, "--serve-toolwire", str(port), "--config", str(config)]
        cmd += ["--transports", transport]
    if people:
        cmd = [sys.executable, __file__, "--serve-people", str(port), "--config", str(config)]
    proc = spawn(cmd, tmp / f"{name}.log")
    wait_ready(proc, port, tmp / f"{name}.log", 30)
    body = anthropic_body("local")
    headers = {"x-api-key": PEOPLE_KEY} if people else {}
    return proc, Target(name, f"http://{HOST}:{port}/v1/messages", body, headers, pid=proc.pid)


def start_litellm(exe: str, tmp: Path, upstream: int) -> tuple[subprocess.Popen[bytes], Target]:
    proc, base, key = litellm_process(exe, tmp, upstream)
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    target = Target(
        "LiteLLM", f"{base}/v1/messages", anthropic_body("bench"), headers, pid=proc.pid
    )
    return proc, target


def litellm_process(exe: str, tmp: Path, upstream: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """The LiteLLM proxy routing model ``bench`` to the upstream: (process, base URL, key)."""
    key = "sk-bench-" + secrets.token_hex(16)
    config = tmp / "litellm.yaml"
    # ``use_chat_completions_api``: its /v1/responses sends ``openai/`` models to the
    # upstream's Responses API otherwise, which the upstream (like most OpenAI-compatible
    # servers) does not have; this bridges them to chat/completions instead.
    config.write_text(
        f"""model_list:
  - model_name: bench
    litellm_params:
      model: openai/qwen3
      api_base: http://{HOST}:{upstream}/v1
      api_key: unused
      use_chat_completions_api: true
litellm_settings:
  telemetry: false
  request_timeout: 120
general_settings:
  master_key: {key}
""",
        encoding="utf-8",
    )
    port = free_port()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the price list at start
        "LITELLM_LOG": "ERROR",
        # /v1/messages for an ``openai/`` model goes to the Responses API by default; the
        # fake upstream (like most OpenAI-compatible servers) only has chat/completions.
        "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES": "True",
    }
    cmd = [exe, "--config", str(config), "--host", HOST, "--port", str(port)]
    proc = spawn(cmd, tmp / "litellm.log", env)
    wait_ready(proc, port, tmp / "litellm.log", 120)
    return proc, f"http://{HOST}:{port}", key


def anthropic_body(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 4096,
        "stream": True,
        "messages": [{"role": "user", "content": "count"}],
    }


def direct_target(upstream: int) -> Target:
    body = {"model": "qwen3", "stream": True, "messages": [{"role": "user", "content": "count"}]}
    return Target("direct", f"http://{HOST}:{upstream}/v1/chat/completions", body, {}, chat_text)


def chat_body(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "count"}],
    }


def responses_body(model: str) -> dict[str, Any]:
    # ``store: false`` as Codex sends it: the relay is measured, not the session store.
    return {"model": model, "stream": True, "store": False, "input": "count"}


def gemini_body(model: str) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "count"}]}]}


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


@dataclass(frozen=True)
class Dialect:
    """One client dialect of the ``--dialects`` axis: how its clients ask for a stream
    (``path`` and ``body`` for a model name, ``auth`` for a key) and read its text."""

    path: Callable[[str], str]
    body: Callable[[str], dict[str, Any]]
    texts: Texts
    auth: Callable[[str], dict[str, str]]
    litellm: bool  # LiteLLM serves it from the OpenAI-Chat upstream


# One entry per dialect. A dialect this toolwire does not serve yet is skipped with a line.
DIALECTS: dict[str, Dialect] = {
    "anthropic": Dialect(
        lambda m: "/v1/messages",
        anthropic_body,
        anthropic_text,
        lambda k: {"x-api-key": k, "anthropic-version": "2023-06-01"},
        litellm=True,
    ),
    "chat": Dialect(lambda m: "/v1/chat/completions", chat_body, chat_text, bearer, litellm=True),
    "responses": Dialect(
        lambda m: "/v1/responses", responses_body, responses_text, bearer, litellm=True
    ),
    "gemini": Dialect(
        lambda m: f"/v1beta/models/{m}:streamGenerateContent?alt=sse",
        gemini_body,
        gemini_text,
        lambda k: {"x-goog-api-key": k},
        litellm=False,
    ),
}


def dialect_target(
    name: str, base: str, dialect: Dialect, model: str, key: str, pid: int
) -> Target:
    headers = dialect.auth(key) if key else {}
    url = base + dialect.path(model)
    return Target(name, url, dialect.body(model), headers, dialect.texts, pid=pid)


# --------------------------------------------------------------------------- report


@dataclass
class Cell:
    """One contender at one concurrency: its paced and unpaced runs (one per round)."""

    paced: list[Run] = field(default_factory=list)
    unpaced_runs: list[Run] = field(default_factory=list)

    @property
    def unpaced(self) -> Run | None:
        """The unpaced run with the median events/s."""
        runs = sorted(self.unpaced_runs, key=lambda r: r.per_second)
        return runs[len(runs) // 2] if runs else None


def added(cells: dict[tuple[str, int], Cell], name: str, n: int, q: float) -> list[float]:
    """Per round: the contender's percentile ``q`` minus the direct run's of that round."""
    base = cells[("direct", n)].paced
    runs = cells[(name, n)].paced
    return [r.percentile_ms(q) - b.percentile_ms(q) for r, b in zip(runs, base, strict=False)]


def spread(values: list[float], fmt: Callable[[float], str] | None = None) -> str:
    """The median, with the range when there are several rounds."""
    f = fmt or ms
    if len(values) == 1:
        return f(values[0])
    return f"{f(statistics.median(values))} ({f(min(values))}-{f(max(values))})"


def checked(name: str, n: int, *runs: Run) -> str:
    out = []
    for run in runs:
        lost, disordered, errors = run.bad()
        if lost or disordered or errors:
            first = f"; first error: {errors[0]}" if errors else ""
            out.append(f"{name} x{n}: {lost} incomplete, {disordered} out of order{first}")
    return "\n".join(out)


def ms(x: float) -> str:
    return f"{x:.3f}"


def table(cells: dict[tuple[str, int], Cell], names: list[str], levels: list[int]) -> str:
    head = ["streams", "direct p50/p99 ms"]
    for name in names[1:]:
        head += [f"{name} added p50 ms", f"{name} added p99 ms", f"{name} events/s"]
    if len(names) == 3:
        head.append(f"{names[1]} / {names[2]} events/s")
    rows = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for n in levels:
        base = cells[("direct", n)].paced
        b50 = statistics.median(r.percentile_ms(0.5) for r in base)
        b99 = statistics.median(r.percentile_ms(0.99) for r in base)
        row = [str(n), f"{ms(b50)} / {ms(b99)}"]
        rates = []
        for name in names[1:]:
            cell = cells.get((name, n))
            if cell is None or cell.unpaced is None:
                row += ["-", "-", "-"]
                continue
            row += [spread(added(cells, name, n, 0.5)), spread(added(cells, name, n, 0.99))]
            row.append(f"{cell.unpaced.per_second:,.0f}")
            rates.append(cell.unpaced.per_second)
        if len(rates) == 2:
            row.append(f"{rates[0] / rates[1]:.2f}x")
        elif len(names) == 3:
            row.append("-")
        rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)


def ratios(cells: dict[tuple[str, int], Cell], a: str, b: str, levels: list[int]) -> str:
    """``a`` against ``b``: each figure as a median over the rounds (range in brackets), and
    the ratio in ``a``'s favour (b / a, but a / b for events/s: above 1, ``a`` is better),
    taken per round (where both figures are positive), then the median."""
    head = ["streams", "figure", a, b, f"in {a}'s favour"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for n in levels:
        ca, cb = cells[(a, n)], cells[(b, n)]
        figures = [
            ("added p50 ms", added(cells, a, n, 0.5), added(cells, b, n, 0.5)),
            ("added p99 ms", added(cells, a, n, 0.99), added(cells, b, n, 0.99)),
            ("events/s", _rates(ca), _rates(cb)),
            ("CPU µs/event, paced", _cpu(ca.paced), _cpu(cb.paced)),
            ("CPU µs/event, unpaced", _cpu(ca.unpaced_runs), _cpu(cb.unpaced_runs)),
        ]
        for figure, xs, ys in figures:
            per_round = [y / x for x, y in zip(xs, ys, strict=False) if x > 0 and y > 0]
            if figure == "events/s":
                per_round = [x / y for x, y in zip(xs, ys, strict=False) if x > 0 and y > 0]
            ratio = f"{statistics.median(per_round):.2f}x" if per_round else "-"
            fmt = None if figure.startswith("added") else _whole
            row = [str(n), figure, spread(xs, fmt), spread(ys, fmt), ratio]
            rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows)


def _whole(x: float) -> str:
    return f"{x:,.0f}"


def _rates(cell: Cell) -> list[float]:
    return [r.per_second for r in cell.unpaced_runs]


def _cpu(runs: list[Run]) -> list[float]:
    return [r.cpu_us_per_event for r in runs]


# --------------------------------------------------------------------------- dialects


async def dialect_targets(
    args: argparse.Namespace, tmp: Path, up_port: int, procs: list[subprocess.Popen[bytes]]
) -> tuple[list[Target], list[str], list[str]]:
    """The direct target, toolwire on each dialect it serves and LiteLLM on each dialect
    it serves; with the dialects toolwire serves and a line per one skipped."""
    proc, anthropic = start_toolwire(tmp, up_port)
    procs.append(proc)
    base = anthropic.url.removesuffix("/v1/messages")
    targets, served, notes = [direct_target(up_port)], [], []
    for name in args.dialects.split(","):
        target = dialect_target(f"toolwire/{name}", base, DIALECTS[name], "local", "", proc.pid)
        probe = await one_stream(target)
        if probe.error:
            why = probe.error.split(":", 1)[0]
            if why in ("HTTP 404", "HTTP 405"):
                notes.append(f"{name}: skipped, this toolwire does not serve it ({why})")
            else:
                notes.append(f"{name}: skipped, its first stream failed: {probe.error[:200]}")
            continue
        served.append(name)
        targets.append(target)
    note = await litellm_note(args)
    if note:
        return targets, served, [*notes, note]
    try:
        lproc, lbase, key = litellm_process(args.litellm, tmp, up_port)
    except RuntimeError as e:
        return targets, served, [*notes, f"LiteLLM: failed to start: {e}"]
    procs.append(lproc)
    for name in served:
        if DIALECTS[name].litellm:
            d = DIALECTS[name]
            targets.append(dialect_target(f"LiteLLM/{name}", lbase, d, "bench", key, lproc.pid))
    return targets, served, notes


async def litellm_note(args: argparse.Namespace) -> str:
    """Why LiteLLM is not run ("" when it is)."""
    if args.no_litellm:
        return "LiteLLM: skipped (--no-litellm)"
    if not await asyncio.to_thread(Path(args.litellm).exists):
        return f"LiteLLM: not run, {args.litellm} does not exist (see --help)"
    return ""


async def dialect_bench(
    args: argparse.Namespace, tmp: Path, up_port: int, procs: list[subprocess.Popen[bytes]]
) -> int:
    levels = [int(x) for x in args.concurrency.split(",")]
    targets, served, notes = await dialect_targets(args, tmp, up_port, procs)
    print(
        f"{args.events} events per stream; latency phase paced at {args.gap_ms} ms per event "
        f"per stream; events/s phase unpaced; {args.rounds} paced rounds. Each proxy serves "
        "each dialect from one OpenAI-Chat upstream; direct = that upstream itself. "
        f"Load average (1, 5, 15 min) at the start: {load_average()}",
        flush=True,
    )
    steal0, total0 = steal_ticks()
    cells = await measure(targets, up_port, levels, args)
    steal1, total1 = steal_ticks()
    problems = [checked(name, n, *c.paced, *c.unpaced_runs) for (name, n), c in cells.items()]
    memory = await memory_per_stream(args, tmp, up_port, served)
    problems += await dialect_soaks(args, up_port, targets)
    print("\n" + dialect_table(cells, served, levels))
    print("\n" + memory_table(memory))
    print("\n" + verdicts(cells, served, levels, memory))
    if total1 > total0:
        share = 100 * (steal1 - steal0) / (total1 - total0)
        print(f"\nCPU time stolen by the hypervisor during these runs: {share:.1f}%")
    print(f"Load average (1, 5, 15 min) at the end: {load_average()}")
    for note in notes:
        print(note)
    problems = [p for p in problems if p]
    if problems:
        print("\nIntegrity problems:\n" + "\n".join(problems))
    else:
        print("Every stream of every run above: complete and in order.")
    return 0 if not problems else 1


async def dialect_soaks(args: argparse.Namespace, up_port: int, targets: list[Target]) -> list[str]:
    """``--soak`` concurrent unpaced streams through toolwire on each dialect."""
    await set_gap(up_port, 0)
    problems = []
    for target in (t for t in targets if t.name.startswith("toolwire/")):
        soak = await drive(target, args.soak, args.events)
        lost, disordered, errors = soak.bad()
        print(
            f"  soak {target.name}: {soak.received:,} of {args.soak * args.events:,} events in "
            f"{soak.seconds:.1f} s ({soak.per_second:,.0f} ev/s); {lost} incomplete, "
            f"{disordered} out of order, {len(errors)} errors",
            flush=True,
        )
        problems.append(checked(f"soak {target.name}", args.soak, soak))
    return problems


def status_kib(pid: int, field_name: str) -> int:
    """A ``kB`` line of /proc/PID/status (VmRSS...)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field_name} for process {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def memory_per_stream(
    args: argparse.Namespace, tmp: Path, up_port: int, dialects: list[str]
) -> dict[str, float]:
    """KiB of toolwire's resident memory per open stream, for each dialect: a fresh proxy
    (so that no earlier run's freed memory is reused), warmed up by two streams, then
    ``--memory-streams`` streams paced slowly enough to stay open while it is sampled.
    One sample can move by half from one fresh process to the next, so the figure is the
    median of ``--memory-rounds``, the dialects taking turns."""
    samples: dict[str, list[float]] = {name: [] for name in dialects}
    for _ in range(args.memory_rounds):
        for name in dialects:
            proc, anthropic = start_toolwire(tmp, up_port, label=f"memory-{name}")
            try:
                base = anthropic.url.removesuffix("/v1/messages")
                target = dialect_target(name, base, DIALECTS[name], "local", "", proc.pid)
                samples[name].append(
                    await _held(target, proc.pid, args.memory_streams, up_port, args)
                )
            finally:
                stop(proc)
    out = {name: statistics.median(xs) for name, xs in samples.items()}
    for name, xs in samples.items():
        each = ", ".join(f"{x:.1f}" for x in xs)
        print(f"  memory toolwire/{name}: {out[name]:.1f} KiB per open stream ({each})", flush=True)
    return out


async def _held(target: Target, pid: int, n: int, up_port: int, args: argparse.Namespace) -> float:
    """The rise of ``pid``'s RSS per stream with ``n`` streams open (its peak over 1 s)."""
    await set_gap(up_port, 0)
    await drive(target, 2, args.events)
    await set_gap(up_port, max(args.gap_ms, 15_000 / args.events))
    await asyncio.sleep(0.5)
    rss0, fds0 = status_kib(pid, "VmRSS"), open_fds(pid)
    streams = [asyncio.create_task(one_stream(target)) for _ in range(n)]
    try:
        # Every stream open: a socket to the client and one to the upstream each, less the
        # warm-up's two kept in the upstream pool (/proc is polled: the proxy is another
        # process). At most 10 s.
        for _ in range(100):
            if open_fds(pid) - fds0 >= 2 * n - 2:
                break
            await asyncio.sleep(0.1)
        if open_fds(pid) - fds0 < 2 * n - 2:
            raise RuntimeError(f"only {(open_fds(pid) - fds0) // 2} of {n} streams opened")
        peak = 0
        for _ in range(10):
            peak = max(peak, status_kib(pid, "VmRSS"))
            await asyncio.sleep(0.1)
    finally:
        for stream in streams:
            stream.cancel()  # each closes its connection
        await asyncio.gather(*streams, return_exceptions=True)
    return (peak - rss0) / n


def dialect_table(cells: dict[tuple[str, int], Cell], served: list[str], levels: list[int]) -> str:
    """The plain table (toolwire beside LiteLLM) once per dialect, a column naming it."""
    rows: list[str] = []
    for name in served:
        sub = {("direct", n): cells[("direct", n)] for n in levels}
        for who in ("toolwire", "LiteLLM"):
            sub.update(
                {
                    (who, n): cells[(f"{who}/{name}", n)]
                    for n in levels
                    if (f"{who}/{name}", n) in cells
                }
            )
        lines = table(sub, ["direct", "toolwire", "LiteLLM"], levels).splitlines()
        if not rows:
            rows = [lines[0].replace("| streams", "| dialect | streams"), "|---" + lines[1]]
        rows += [f"| {name} " + line for line in lines[2:]]
    return "\n".join(rows)


def memory_table(memory: dict[str, float]) -> str:
    rows = ["| dialect | toolwire KiB per open stream | vs anthropic |", "|---|---:|---:|"]
    base = memory.get("anthropic")
    for name, kib in memory.items():
        ratio = f"{kib / base:.2f}x" if base and base > 0 else "-"
        rows.append(f"| {name} | {kib:.1f} | {ratio} |")
    return "\n".join(rows)


def verdicts(
    cells: dict[tuple[str, int], Cell],
    served: list[str],
    levels: list[int],
    memory: dict[str, float],
) -> str:
    """Each dialect against the dialect axis's targets (added p99 as the median over the rounds)."""
    out = ["Targets:"]
    for name in served:
        tw, ll = f"toolwire/{name}", f"LiteLLM/{name}"
        rates = [_ratio(cells[(tw, n)], cells[(ll, n)]) for n in levels if (ll, n) in cells]
        rates = [r for r in rates if r]
        if rates:
            low = min(rates)
            out.append(
                f"  {name}: >= 10x LiteLLM events/s: {_met(ok=low >= 10)} (lowest {low:.1f}x)"
            )
        for n, limit in ((1, 1.0), (100, 2.0)):
            if n in levels:
                p99 = statistics.median(added(cells, tw, n, 0.99))
                verdict = _met(ok=p99 <= limit)
                out.append(f"  {name}: added p99 <= {limit:g} ms at {n}: {verdict} ({p99:.3f} ms)")
        base = memory.get("anthropic")
        if name in memory and base:
            ratio = memory[name] / base
            verdict = _met(ok=ratio <= 1.5)
            out.append(
                f"  {name}: memory per open stream <= 1.5x anthropic's: {verdict} ({ratio:.2f}x)"
            )
    return "\n".join(out)


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _ratio(a: Cell, b: Cell) -> float:
    """``a``'s events/s over ``b``'s (0 when either has no unpaced run)."""
    if a.unpaced is None or b.unpaced is None:
        return 0.0
    return a.unpaced.per_second / b.unpaced.per_second


def _met(*, ok: bool) -> str:
    return "met" if ok else "NOT met"


# --------------------------------------------------------------------------- main


async def measure(
    targets: list[Target], upstream: int, levels: list[int], args: argparse.Namespace
) -> dict[tuple[str, int], Cell]:
    """Paced rounds interleaved (direct, toolwire, direct, toolwire...) so that both meet
    the same machine; LiteLLM, orders of magnitude off, gets one round. Then unpaced."""
    await set_gap(upstream, 0)
    for target in targets:
        await drive(target, 2, args.events)  # warm-up: connections, imports, first paths
    cells: dict[tuple[str, int], Cell] = {(t.name, n): Cell() for t in targets for n in levels}
    for n in levels:
        await set_gap(upstream, args.gap_ms)
        for round_ in range(args.rounds):
            for target in targets:
                if target.name.startswith("LiteLLM") and round_:
                    continue
                await settle(targets)
                run = await drive(target, n, args.events)
                cells[(target.name, n)].paced.append(run)
                print(
                    f"  {target.name:8} x{n:<3} paced round {round_ + 1}: "
                    f"p50 {run.percentile_ms(0.5):.3f} ms p99 {run.percentile_ms(0.99):.3f} ms"
                    + (f"; proxy CPU {run.cpu_us_per_event:.0f} us/event" if target.pid else ""),
                    flush=True,
                )
        await set_gap(upstream, 0)
        for round_ in range(args.unpaced_rounds):
            for target in targets:
                if target.name.startswith("LiteLLM") and round_:
                    continue
                await settle(targets)
                unpaced = await drive(target, n, args.events)
                cells[(target.name, n)].unpaced_runs.append(unpaced)
                cpu = f"; proxy CPU {unpaced.cpu_us_per_event:.0f} us/event" if target.pid else ""
                print(
                    f"  {target.name:8} x{n:<3} unpaced {unpaced.per_second:,.0f} ev/s "
                    f"({unpaced.seconds:.1f} s){cpu}",
                    flush=True,
                )
    return cells


async def settle(targets: list[Target], limit: float = 60.0) -> None:
    """Wait until every proxy process is idle (under 2% of a core over half a second), so
    that no run pays for the background work of the one before it (LiteLLM keeps busy
    for a while after a heavy run)."""
    pids = [t.pid for t in targets if t.pid]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = sum(cpu_seconds(p) for p in pids)
        await asyncio.sleep(0.5)
        if sum(cpu_seconds(p) for p in pids) - before < 0.01:
            return


def steal_ticks() -> tuple[int, int]:
    """(steal, total) CPU ticks of the machine so far (/proc/stat; zeros when unknown)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


async def bench(args: argparse.Namespace, tmp: Path) -> int:
    levels = [int(x) for x in args.concurrency.split(",")]
    up_port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    cmd = [sys.executable, __file__, "--serve-upstream", str(up_port), "--events", str(args.events)]
    cmd += ["--phase-locked"] if args.phase_locked else []
    try:
        procs.append(spawn(cmd, tmp / "upstream.log"))
        wait_ready(procs[-1], up_port, tmp / "upstream.log", 15)
        if args.dialects:
            return await dialect_bench(args, tmp, up_port, procs)
        targets = [direct_target(up_port)]
        transports = args.transports.split(",") if args.transports else [None]
        for transport in transports:
            proc, target = start_toolwire(tmp, up_port, transport)
            procs.append(proc)
            targets.append(target)
        if args.people:
            proc, target = start_toolwire(tmp, up_port, people=True)
            procs.append(proc)
            targets.append(target)
        litellm_note = ""
        names = ["direct", "toolwire", "LiteLLM"]
        if args.transports:
            names = ["direct", *transports]
        elif args.people:
            names = ["direct", "toolwire", "toolwire+keys"]
        elif args.no_litellm:
            litellm_note = "LiteLLM: skipped (--no-litellm)"
        elif not await asyncio.to_thread(Path(args.litellm).exists):
            litellm_note = f"LiteLLM: not run, {args.litellm} does not exist (see --help)"
        else:
            try:
                proc, target = start_litellm(args.litellm, tmp, up_port)
                procs.append(proc)
                targets.append(target)
            except RuntimeError as e:
                litellm_note = f"LiteLLM: failed to start: {e}"
        return await report(args, up_port, levels, targets, names, litellm_note)
    finally:
        for proc in reversed(procs):
            stop(proc)


async def report(
    args: argparse.Namespace,
    up_port: int,
    levels: list[int],
    targets: list[Target],
    names: list[str],
    note: str,
) -> int:
    print(
        f"{args.events} events per stream; latency phase paced at {args.gap_ms} ms per event "
        "per stream; events/s phase unpaced. Both proxies serve POST /v1/messages "
        "(Anthropic SSE) from an OpenAI-Chat upstream.",
        flush=True,
    )
    steal0, total0 = steal_ticks()
    cells = await measure(targets, up_port, levels, args)
    steal1, total1 = steal_ticks()
    problems = [
        checked(name, n, *cell.paced, *cell.unpaced_runs) for (name, n), cell in cells.items()
    ]
    print()
    print(table(cells, names, levels))
    if len(names) == 3 and "LiteLLM" not in names:
        print()
        print(ratios(cells, names[1], names[2], levels))
    if total1 > total0:
        share = 100 * (steal1 - steal0) / (total1 - total0)
        print(f"\nCPU time stolen by the hypervisor during these runs: {share:.1f}%")
    if note:
        print(f"\n{note}")
    await set_gap(up_port, 0)
    soak = await drive(targets[1], args.soak, args.events)
    lost, disordered, errors = soak.bad()
    clean = not (lost or disordered or errors)
    print(
        f"\nSoak, toolwire, {args.soak} concurrent streams x {args.events} events: "
        f"{soak.received:,} of {args.soak * args.events:,} events received in "
        f"{soak.seconds:.1f} s ({soak.per_second:,.0f} ev/s); {lost} streams incomplete, "
        f"{disordered} out of order, {len(errors)} errors: {'PASS' if clean else 'FAIL'}"
    )
    problems = [p for p in problems if p]
    if errors:
        problems.append(f"soak: first error: {errors[0]}")
    if problems:
        print("\nIntegrity problems:\n" + "\n".join(problems))
    else:
        print("Every stream of every run above: complete and in order.")
    return 0 if clean and not problems else 1


def default_litellm() -> str:
    beside = Path(sys.executable).parent / "litellm"
    return str(beside) if beside.exists() else DEFAULT_LITELLM


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--gap-ms", type=float, default=20.0, help="latency phase pacing")
    parser.add_argument("--concurrency", default="1,10,100")
    parser.add_argument("--soak", type=int, default=200, help="concurrent streams of the soak")
    parser.add_argument(
        "--rounds", type=int, default=3, help="paced rounds of direct and toolwire, interleaved"
    )
    parser.add_argument(
        "--litellm",
        default=default_litellm(),
        help="the litellm CLI: by default the one beside this Python (uv pip install "
        "'litellm[proxy]' into the venv) or else a separate venv's: python -m venv "
        "/tmp/litellm-venv && /tmp/litellm-venv/bin/pip install 'litellm[proxy]'",
    )
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument(
        "--phase-locked",
        action="store_true",
        help="pace every stream on one shared 20 ms grid (all streams write at once) "
        "instead of each from a random offset",
    )
    parser.add_argument(
        "--unpaced-rounds", type=int, default=1, help="unpaced rounds, interleaved likewise"
    )
    parser.add_argument(
        "--transports",
        help="compare toolwire's upstream HTTP paths instead of LiteLLM: 'lean,httpx2' "
        "(lean: toolwire's HTTP/1.1 for http:// upstreams; httpx2: httpx2's own transport)",
    )
    parser.add_argument(
        "--people",
        action="store_true",
        help="compare toolwire with toolwire+keys (a key per request, user and team "
        "budgets reserved and settled, a SQLite ledger) instead of LiteLLM",
    )
    parser.add_argument(
        "--dialects",
        help="the dialect axis instead: toolwire (and LiteLLM where it serves the dialect) "
        f"on each of these client dialects, comma-separated, of {','.join(DIALECTS)}; "
        "and toolwire's memory per open stream on each",
    )
    parser.add_argument(
        "--memory-streams", type=int, default=200, help="open streams of the memory phase"
    )
    parser.add_argument(
        "--memory-rounds", type=int, default=3, help="fresh proxies per dialect, memory phase"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a reduced size: 200 events per stream, 2 paced rounds, a 100-stream soak",
    )
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-people", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-toolwire", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream, args.events, phase_locked=args.phase_locked)
        return 0
    if args.serve_toolwire:
        serve_toolwire(args.serve_toolwire, args.config, lean=args.transports == "lean")
        return 0
    if args.serve_people:
        serve_people(args.serve_people, args.config)
        return 0
    if args.quick:
        args.events, args.rounds, args.soak = 200, 2, 100
    unknown = set((args.dialects or "").split(",")) - {"", *DIALECTS}
    if unknown:
        parser.error(
            f"unknown dialect(s) {', '.join(sorted(unknown))}: pick from {', '.join(DIALECTS)}"
        )
    with tempfile.TemporaryDirectory(prefix="toolwire-bench-proxy-") as tmp:
        return int(run(bench(args, Path(tmp))))


if __name__ == "__main__":
    sys.exit(main())

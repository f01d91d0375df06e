"""Benchmark part: a long tool loop through the real agent against a 32k-token window.

The agent (``ToolwireAgent``, in this process, driven by the official ACP SDK client
through ``toolwire.testing.connect_in_memory``) works on a task that reads ``FILES``
files of 4 KB, one ``Read`` per model response, from a fake Anthropic server on
loopback that enforces a 32,768-token window the way the API does: a request whose
tokens (UTF-8 bytes / 3.5 of its system prompt, tools and messages) plus ``max_tokens``
exceed the window gets the real 400 body ("prompt is too long: N tokens > M maximum").
Its answers report those counts as usage, as the API does.

Reported: failed prompts (target 0), 400s answered, compactions, time per compaction
(planning, the offline summary, storing it; from the agent's log record of each,
target under 200 ms), and whether every request after a compaction holds the newest file
read verbatim (target: always).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import statistics
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block

from toolwire.agent.agent import ToolwireAgent
from toolwire.agent.store.worker import StoreWorker
from toolwire.config import load_config
from toolwire.handoff.render import OPEN
from toolwire.testing import connect_in_memory, streams

WINDOW = 32_768
FILES = 200
FILE_BYTES = 4_000
BYTES_PER_TOKEN = 3.5


def file_text(index: int) -> str:
    line = f"value_{index} = compute({index})  # a line of file {index}\n"
    return f"# FILE {index}\n" + line * (FILE_BYTES // len(line))


def count(body: dict[str, Any]) -> int:
    parts = [json.dumps(body.get(k, ""), ensure_ascii=False) for k in ("system", "tools")]
    parts.append(json.dumps(body["messages"], ensure_ascii=False))
    return math.ceil(sum(len(p.encode()) for p in parts) / BYTES_PER_TOKEN)


@dataclass
class Model:
    """The scripted model and the window it enforces; what it saw."""

    root: Path
    served: int = 0
    refused: int = 0
    requests: int = 0
    after_compaction: int = 0
    newest_missing: int = 0
    last_block: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    """Every request that was answered, for the prompt-cache simulator."""
    newest: str = ""
    """The newest Read result as the model first received it (JSON-escaped)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict[str, Any]) -> tuple[int, bytes]:
        with self.lock:
            self.requests += 1
            tokens = count(body)
            if tokens + body["max_tokens"] > WINDOW:
                self.refused += 1
                message = (
                    f"prompt is too long: {tokens + body['max_tokens']} tokens > {WINDOW} maximum"
                )
                error = {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": message},
                }
                return 400, json.dumps(error).encode()
            for item in body["messages"][-1]["content"]:
                if item.get("type") == "tool_result" and isinstance(item.get("content"), str):
                    self.newest = json.dumps(item["content"], ensure_ascii=False)[1:-1]
            self.bodies.append(body)
            text = json.dumps(body["messages"], ensure_ascii=False)
            block = text[: text.find("[/TOOLWIRE")] if OPEN in text else ""
            if block and block != self.last_block:
                self.after_compaction += 1
                self.newest_missing += self.newest not in text
                self.last_block = block
            if self.served < FILES:
                path = str(self.root / f"f{self.served}.py")
                events = streams.tool_call(f"toolu_{self.served}", "Read", {"file_path": path})
                self.served += 1
                events.append(streams.end("tool_use", 30))
            else:
                events = [*streams.text("Read them all."), streams.end("end_turn", 5)]
            return 200, streams.anthropic_sse(events, input_tokens=tokens)


def serve(model: Model) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            status, payload = model.answer(body)
            self.send_response(status)
            kind = "text/event-stream" if status == 200 else "application/json"
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Client:
    """An ACP client that allows everything and counts the failures it is told of."""

    def __init__(self) -> None:
        self.failed_messages = 0

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        text = str(getattr(getattr(update, "content", None), "text", ""))
        if "failed" in text or "cannot be used" in text:
            self.failed_messages += 1


class Timings(logging.Handler):
    """Each compaction's duration, from the agent's log record of it."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.took: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        took = getattr(record, "compaction_ms", None)
        if took is not None:
            self.took.append(float(took))


async def run_loop(
    bodies: list[dict[str, Any]] | None = None, *, auto: bool = True
) -> dict[str, Any]:
    """One run; ``auto=False``: ``[compaction] enabled = false``, so only the recovery
    from the provider's 400 compacts."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        for i in range(FILES):
            (root / f"f{i}.py").write_text(file_text(i))
        model = Model(root)
        server = serve(model)
        config_file = Path(tmp) / "config.toml"
        config_file.write_text(
            'default_backend = "small"\n[backends.small]\nprovider = "anthropic"\n'
            f'model = "bench-model"\nbase_url = "http://127.0.0.1:{server.server_port}"\n'
            f'api_key_env = "BENCH_KEY"\ncontext_window = {WINDOW}\nmax_output_tokens = 2048\n'
            '[limits]\nmax_turn_requests = 1000\n[compaction]\nsummary = "extractive"\n'
            f"enabled = {'true' if auto else 'false'}\n"
        )
        config = load_config(config_file)
        client, timings = Client(), Timings()
        agent_log = logging.getLogger("toolwire.agent")
        agent_log.addHandler(timings)
        agent_log.setLevel(logging.INFO)
        os.environ["BENCH_KEY"] = "bench"
        try:
            async with connect_in_memory(
                lambda sink: ToolwireAgent(config, StoreWorker(":memory:"), sink),
                client,  # type: ignore[arg-type]
            ) as pair:
                await pair.conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await pair.conn.new_session(cwd=str(root), mcp_servers=[])
                task = f"Read f0.py to f{FILES - 1}.py one by one, then say you are done."
                done = await pair.conn.prompt(
                    session_id=session.session_id, prompt=[text_block(task)]
                )
        finally:
            server.shutdown()
            agent_log.removeHandler(timings)
        failed = int(done.stop_reason != "end_turn") + client.failed_messages
        if bodies is not None:
            bodies.extend(model.bodies)
        return {
            "turns": model.served,
            "requests": model.requests,
            "failed prompts": failed,
            "400s answered": model.refused,
            "compactions": len(timings.took),
            "compaction ms (median)": statistics.median(timings.took) if timings.took else 0.0,
            "compaction ms (max)": max(timings.took, default=0.0),
            "newest file after each compaction": (
                f"{model.after_compaction - model.newest_missing}/{model.after_compaction}"
            ),
        }


def table(bodies: list[dict[str, Any]] | None = None) -> list[str]:
    """The part's table, as Markdown lines; ``bodies`` receives the requests answered."""
    result = asyncio.run(run_loop(bodies))
    recovery = asyncio.run(run_loop(auto=False))
    lines = [
        f"{FILES}-turn Read loop, {FILE_BYTES} B files, {WINDOW}-token window enforced",
        "",
        "| measure | automatic compaction | recovery only (`enabled = false`) | target |",
        "|---|---|---|---|",
    ]
    targets = {
        "failed prompts": "0",
        "compaction ms (median)": "< 200",
        "compaction ms (max)": "< 200",
        "newest file after each compaction": "always",
    }
    for key, value in result.items():
        cells = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in (value, recovery[key])]
        lines.append(f"| {key} | {cells[0]} | {cells[1]} | {targets.get(key, '')} |")
    return lines


if __name__ == "__main__":
    print("\n".join(table()))

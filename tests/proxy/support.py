"""Helpers for the proxy tests: a real uvicorn on 127.0.0.1, configs, fake upstream bodies."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import uvicorn
from starlette.applications import Starlette

from tests.fakes.http import sse
from toolwire.decode import decoder_for
from toolwire.events import Event, StopReason
from toolwire.proxy import ProxySettings, create_app, load_settings
from toolwire.proxy.serving import uvicorn_config
from toolwire.proxy.stores import ProxyStore
from toolwire.proxy.telemetry import Telemetry
from toolwire.testing import streams


def write_config(tmp: Path, openai_url: str, anthropic_url: str, extra: str = "") -> Path:
    """A config with an OpenAI-Chat backend ``local`` and an Anthropic one ``claude``."""
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_backend = "local"
[backends.local]
provider = "openai-chat"
base_url = "{openai_url}/v1"
model = "qwen3"
[backends.claude]
provider = "anthropic"
base_url = "{anthropic_url}"
model = "claude-up"
[limits]
max_retries = 1
read_timeout = 5.0
[proxy]
default_backend = "local"
{extra}
""",
        encoding="utf-8",
    )
    return path


def windowed_config(
    tmp: Path, url: str, *, local: int | None = None, claude: int | None = None, extra: str = ""
) -> Path:
    """``write_config`` with one upstream for both, ``context_window`` on ``local`` (qwen3)
    and/or ``claude`` (claude-up) when given."""
    path = write_config(tmp, url, url, extra)
    text = path.read_text()
    for model, window in (("qwen3", local), ("claude-up", claude)):
        if window is not None:
            line = f'model = "{model}"'
            text = text.replace(line, f"{line}\ncontext_window = {window}")
    path.write_text(text)
    return path


@contextmanager
def running(
    settings: ProxySettings, store: ProxyStore | None = None, telemetry: Telemetry | None = None
) -> Iterator[str]:
    """The proxy served by uvicorn on an ephemeral loopback port; yields its base URL."""
    with serving(create_app(settings, store, telemetry), settings, lifespan="off") as url:
        yield url


@contextmanager
def serving(app: Starlette, settings: ProxySettings, *, lifespan: str) -> Iterator[str]:
    """``app`` served by uvicorn on an ephemeral loopback port with the limits
    ``toolwire proxy serve`` serves with (toolwire.proxy.serving); yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn_config(app, settings, log_level="warning", lifespan=lifespan, ws="none")
    server = _Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.stop()
        thread.join(timeout=10)
        sock.close()


class _Server(uvicorn.Server):
    """uvicorn's server, whose main loop ends the moment ``stop`` is called: uvicorn's own
    looks for its exit flag every 100 ms, and every test's teardown waited for that."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = asyncio.Event()

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        if not self.should_exit:  # stop() before this point found no loop to wake
            await self._stop.wait()

    def stop(self) -> None:
        self.should_exit = True
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)


def settings_for(tmp: Path, openai_url: str, anthropic_url: str, extra: str = "") -> ProxySettings:
    return load_settings(write_config(tmp, openai_url, anthropic_url, extra))


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "qwen3",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


ARGS_PIECES = ['{"file_', 'path": "src/a', '.py", "limit": 20}']


def openai_tool_stream() -> list[bytes]:
    """An OpenAI Chat stream: some text, then one Read call in three argument pieces."""
    events: list[tuple[str | None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": "Reading it."})),
        (
            None,
            chat_chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_abc",
                            "type": "function",
                            "function": {"name": "Read", "arguments": ""},
                        }
                    ]
                }
            ),
        ),
    ]
    for piece in ARGS_PIECES:
        events.append(
            (None, chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        )
    events.append((None, chat_chunk({}, "tool_calls")))
    usage = {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62}
    events.append((None, {"object": "chat.completion.chunk", "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return [sse([e]) for e in events]


def openai_text_stream(text: str) -> list[bytes]:
    return [
        sse([(None, chat_chunk({"role": "assistant", "content": text}))]),
        sse([(None, chat_chunk({}, "stop"))]),
        sse([(None, "[DONE]")]),
    ]


def anthropic_text_stream(text: str) -> list[bytes]:
    return anthropic_stream([{"type": "text", "text": text}], "end_turn")


def anthropic_stream(
    blocks: list[dict[str, Any]], stop_reason: StopReason, *, ping: bool = False
) -> list[bytes]:
    """An Anthropic Messages stream, one SSE event per chunk, sending ``blocks`` whole:
    text and thinking as deltas (a thinking block's signature last), tool input as one
    ``input_json_delta``, any other block (server tools, redacted thinking) in its start."""
    events: list[Event] = []
    whole: list[tuple[int, dict[str, Any]]] = []
    calls = 0
    for position, block in enumerate(blocks):
        if block["type"] == "text":
            events += streams.text(block["text"])
        elif block["type"] == "thinking":
            events += streams.thinking(block["thinking"], block["signature"])
        elif block["type"] == "tool_use":
            events += streams.tool_call(block["id"], block["name"], block["input"], index=calls)
            calls += 1
        else:
            whole.append((position, block))
    events.append(streams.end(stop_reason, 3))
    payloads = streams.anthropic_payloads(
        events, model="claude-up", message_id="msg_up", input_tokens=10, ping=ping
    )
    for position, block in whole:
        payloads = streams.with_blocks(payloads, position, [block])
    return streams.sse_chunks(payloads)


def sdk_final_message(url: str, model: str, prompt: str) -> Any:
    """The ``anthropic`` SDK's accumulated message for one streamed request to ``url``."""
    client = anthropic.Anthropic(base_url=url, api_key="client-key", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": prompt}]
    with client.messages.stream(model=model, max_tokens=1024, messages=messages) as stream:
        return stream.get_final_message()


def decode_anthropic(body: bytes) -> list[Event]:
    """toolwire's own Anthropic decoder over a proxy response body."""
    decoder = decoder_for("anthropic")
    return decoder.feed(body) + decoder.close()


def sse_payloads(body: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE body, in order."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data: "):
            out.append(json.loads(line[6:]))
    return out


def request_body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A Claude-Code-like Messages request."""
    body: dict[str, Any] = {
        "model": "claude-opus-5-5",
        "max_tokens": 128000,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=1;"},
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": [
            {
                "name": "Read",
                "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
            }
        ],
        "messages": messages,
        "metadata": {"user_id": json.dumps({"device_id": "d", "session_id": "sess-1"})},
    }
    body.update(extra)
    return body


FILE_TEXT = "1\tdef main():\n2\t    return 42\n"


def tool_loop_messages() -> list[dict[str, Any]]:
    """A history: prompt, a Read call, its result (the file's text)."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "Read src/a.py"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {
                    "type": "tool_use",
                    "id": "call_abc",
                    "name": "Read",
                    "input": {"file_path": "src/a.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_abc", "content": FILE_TEXT}],
        },
    ]


def read_turn(call_id: str, path: str, text: str) -> list[dict[str, Any]]:
    """Messages of one Read: the call, its result (``text``), the model's short reply."""
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": f"Read {path}."}]},
    ]


def compact_json(value: Any) -> str:
    """``value`` as compact JSON: equal strings mean byte-identical bodies."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def message_text(content: Any) -> str:
    """The text of a message's (or tool result's) ``content``: a string or text blocks."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content)


def post_messages(url: str, history: list[dict[str, Any]]) -> httpx2.Response:
    """A streamed Claude-Code-like request with ``history`` to the proxy; must be a 200."""
    reply = httpx2.post(f"{url}/v1/messages", json=request_body(history, stream=True), timeout=10)
    assert reply.status_code == 200, reply.text
    return reply


def switch_cli(
    url: str, config: Path, backend: str, session: str
) -> subprocess.CompletedProcess[str]:
    """``toolwire proxy switch BACKEND --session SESSION`` against the proxy at ``url``."""
    port = url.rsplit(":", 1)[1]
    argv = ["proxy", "switch", backend, "--session", session, "--port", port]
    return subprocess.run(
        [sys.executable, "-m", "toolwire", *argv, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def grow(history: list[dict[str, Any]], kind: str, arg: Any, n: int) -> None:
    """One step of a generated Claude-Code-shaped session: a ``read`` of ``arg`` bytes
    (the call, its result, the reply), or a prompt."""
    if kind == "read":
        history += read_turn(f"toolu_{n:02d}", f"/src/f{n}.py", f"{n}: " + "y" * arg)[:2]
    else:
        history.append({"role": "user", "content": f"Prompt {arg} at step {n}."})

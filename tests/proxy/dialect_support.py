"""Fake upstreams of two families for the OpenAI dialect tests: each family answers a text,
two parallel tool calls, or an error, and says which backend the proxy routes it to."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.support import anthropic_stream, chat_chunk, openai_text_stream, running
from toolwire.proxy import load_settings
from toolwire.proxy.stores import ProxyStore

# The model each family's requests name: ``backend,model`` routes to that backend.
MODELS = {"anthropic": "claude,claude-up", "openai": "local,qwen3"}
CALLS = [
    ("call_1", "Read", {"file_path": "src/a.py"}),
    ("call_2", "Read", {"file_path": "src/b.py"}),
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "Read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        },
    }
]


def config(tmp: Path, url: str, extra: str = "") -> Path:
    """An OpenAI-Chat backend ``local`` and an Anthropic one ``claude``, both at ``url``."""
    path = tmp / "config.toml"
    path.write_text(
        f"""
default_backend = "local"
[backends.local]
provider = "openai-chat"
base_url = "{url}/v1"
model = "qwen3"
[backends.claude]
provider = "anthropic"
base_url = "{url}"
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


@contextmanager
def proxy(
    tmp: Path, upstream: FakeServer, extra: str = "", store: ProxyStore | None = None
) -> Iterator[str]:
    """The proxy in front of ``upstream``; yields its ``/v1`` base URL (the SDK's)."""
    with running(load_settings(config(tmp, upstream.url, extra)), store) as url:
        yield f"{url}/v1"


def text_reply(family: str, text: str) -> Reply:
    if family == "anthropic":
        return Reply(chunks=anthropic_stream([{"type": "text", "text": text}], "end_turn"))
    return Reply(chunks=openai_text_stream(text))


def calls_reply(family: str, calls: list[tuple[str, str, dict[str, Any]]] = CALLS) -> Reply:
    """Parallel tool calls: the Anthropic family one block each, the OpenAI family with
    their arguments interleaved (both started before either ends)."""
    if family == "anthropic":
        blocks = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
        return Reply(chunks=anthropic_stream(blocks, "tool_use"))
    starts = [
        {"index": n, "id": i, "type": "function", "function": {"name": name, "arguments": ""}}
        for n, (i, name, _) in enumerate(calls)
    ]
    chunks = [chat_chunk({"role": "assistant", "tool_calls": starts})]
    for n, (_, _, args) in enumerate(calls):
        text = json.dumps(args)
        for piece in (text[:5], text[5:]):
            chunks.append(
                chat_chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
            )
    chunks.append(chat_chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}
    tail: list[tuple[str | None, Any]] = [
        (None, {"object": "chat.completion.chunk", "choices": [], "usage": usage}),
        (None, "[DONE]"),
    ]
    return Reply(chunks=[sse([(None, c)]) for c in chunks] + [sse(tail)])


def error_reply(family: str) -> Reply:
    """The upstream refuses the request (a 400 in its family's error shape)."""
    if family == "anthropic":
        error = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "bad input"},
        }
    else:
        error = {"error": {"message": "bad input", "type": "invalid_request_error", "code": None}}
    return Reply(status=400, chunks=[json.dumps(error).encode()], content_type="application/json")


def upstream_messages(body: dict[str, Any]) -> str:
    """An upstream request's conversation as one JSON text (either family's form)."""
    return json.dumps(body.get("messages") or body.get("input"))


#: The OpenAI SDK clients ``openai_client`` made; closed after each test
#: (tests/proxy/conftest.py), so no socket is left to the collector.
OPEN_CLIENTS: list[openai.OpenAI] = []


def openai_client(url: str, key: str = "client-key") -> openai.OpenAI:
    """The ``openai`` SDK pointed at the proxy, without retries; closed after the test."""
    client = openai.OpenAI(base_url=url, api_key=key, max_retries=0)
    OPEN_CLIENTS.append(client)
    return client

"""The OpenAI dialects on the Anthropic route's own path: the session a client names,
thinking given back to the backend that made it, a stream cut mid-way, the metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.proxy.dialect_support import MODELS, config, text_reply
from tests.proxy.support import anthropic_stream, running
from toolwire.proxy import load_settings

SIGNATURE = "sig-" + "x" * 40
FILE = "1\tdef main():\n2\t    return 42\n"


def _chat(url: str, messages: list[Any], **extra: Any) -> httpx2.Response:
    body = {"model": "local,qwen3", "messages": messages, **extra}
    reply = httpx2.post(f"{url}/chat/completions", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply


def test_the_session_is_what_the_client_names(base_url: str, upstream: FakeServer) -> None:
    upstream.script(*[text_reply("openai", "ok") for _ in range(5)])
    ask: list[Any] = [{"role": "user", "content": "Fix the bug"}]
    named = _chat(base_url, ask, prompt_cache_key="conv-42")
    assert named.headers["x-toolwire-session"] == "conv-42"
    body = {"model": "local,qwen3", "messages": ask}
    header = httpx2.post(f"{base_url}/chat/completions", json=body, headers={"session_id": "s-7"})
    assert header.headers["x-toolwire-session"] == "s-7"
    # Without a name: the first message's digest, the same as the conversation grows.
    first = _chat(base_url, ask).headers["x-toolwire-session"]
    longer = [*ask, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    assert _chat(base_url, longer).headers["x-toolwire-session"] == first
    other = _chat(base_url, [{"role": "user", "content": "Another task"}])
    assert other.headers["x-toolwire-session"] != first


def test_thinking_goes_back_to_the_backend_that_made_it(
    base_url: str, upstream: FakeServer
) -> None:
    thought = {"type": "thinking", "thinking": "Look first.", "signature": SIGNATURE}
    answer = anthropic_stream([thought, {"type": "text", "text": "Looked."}], "end_turn")
    upstream.script(Reply(chunks=answer), text_reply("anthropic", "Again."))
    client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
    with client:
        first = client.responses.create(
            model=MODELS["anthropic"], input="Look", reasoning={"effort": "high"}
        )
        (reasoning, message) = first.output
        assert reasoning.type == "reasoning"
        assert reasoning.encrypted_content
        assert message.type == "message"
        items: list[Any] = [
            {"role": "user", "content": "Look"},
            *[o.model_dump(exclude_none=True) for o in first.output],
            {"role": "user", "content": "Again"},
        ]
        second = client.responses.create(model=MODELS["anthropic"], input=items)
    assert second.output_text == "Again."
    sent = upstream.requests[1].json()["messages"]
    blocks = [b for m in sent for b in m["content"] if isinstance(b, dict)]
    kept = [b for b in blocks if b.get("type") == "thinking"]
    assert kept == [{"type": "thinking", "thinking": "Look first.", "signature": SIGNATURE}]
    assert "thinking" in upstream.requests[0].json()  # reasoning.effort asked for thinking


def test_a_stream_cut_midway_ends_in_an_error_each_sdk_reads(
    base_url: str, upstream: FakeServer
) -> None:
    cut = anthropic_stream([{"type": "text", "text": "Half an answer, then"}], "end_turn")
    upstream.script(Reply(chunks=cut, drop_after=3), Reply(chunks=cut, drop_after=3))
    client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
    with client:
        chat = client.chat.completions.create(
            model=MODELS["anthropic"], messages=[{"role": "user", "content": "go"}], stream=True
        )
        with pytest.raises(openai.APIError):
            list(chat)
        events = list(client.responses.create(model=MODELS["anthropic"], input="go", stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error is not None


def test_the_requests_are_counted_as_the_anthropic_routes_are(
    base_url: str, upstream: FakeServer
) -> None:
    upstream.script(text_reply("anthropic", "a"), text_reply("openai", "b"))
    _chat(base_url, [{"role": "user", "content": "x"}], model=MODELS["anthropic"])
    body = {"model": MODELS["openai"], "input": "y", "stream": True}
    streamed = httpx2.post(f"{base_url}/responses", json=body, timeout=10)
    assert "response.completed" in streamed.text
    metrics = httpx2.get(base_url.removesuffix("/v1") + "/metrics").text
    lines = [line for line in metrics.splitlines() if "toolwire_proxy_requests_total" in line]
    assert any('backend="claude"' in line for line in lines)
    assert any('backend="local"' in line for line in lines)
    assert any(line.startswith("toolwire_proxy_streams_total") for line in metrics.splitlines())


def test_a_failed_backend_fails_over_for_an_openai_client(tmp_path: Path) -> None:
    """The Anthropic upstream is down (a 529): the request goes on to the OpenAI-Chat
    backend, and the Responses client reads that answer as if nothing happened."""
    overloaded = Reply(
        status=529,
        chunks=[b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'],
        content_type="application/json",
    )
    with FakeServer() as upstream:
        upstream.script(overloaded, text_reply("openai", "From the fallback."))
        path = config(tmp_path, upstream.url)
        text = path.read_text().replace(
            'model = "claude-up"', 'model = "claude-up"\nfallbacks = ["local"]'
        )
        path.write_text(text)
        with (
            running(load_settings(path)) as base,
            openai.OpenAI(base_url=f"{base}/v1", api_key="k", max_retries=0) as client,
        ):
            raw = client.responses.with_raw_response.create(model=MODELS["anthropic"], input="hi")
    assert raw.parse().output_text == "From the fallback."
    assert raw.headers["x-toolwire-backend"] == "local"
    assert [r.path for r in upstream.requests] == ["/v1/messages", "/v1/chat/completions"]


def test_a_refusal_is_content_filter_in_both_dialects(base_url: str, upstream: FakeServer) -> None:
    refused = anthropic_stream([{"type": "text", "text": "I can't help."}], "refusal")
    upstream.script(Reply(chunks=refused), Reply(chunks=refused))
    with openai.OpenAI(base_url=base_url, api_key="k", max_retries=0) as client:
        ask: Any = [{"role": "user", "content": "x"}]
        chat = client.chat.completions.create(model=MODELS["anthropic"], messages=ask)
        response = client.responses.create(model=MODELS["anthropic"], input="x")
    assert chat.choices[0].finish_reason == "content_filter"
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "content_filter"
    assert response.output_text == "I can't help."


def test_a_codex_session_switched_mid_task_keeps_the_files_it_read(
    base_url: str, upstream: FakeServer
) -> None:
    """A Responses session (named by ``prompt_cache_key``) on the OpenAI-Chat backend is
    switched to the Anthropic one: its next request still holds the file read before."""
    upstream.script(text_reply("openai", "I read it."), text_reply("anthropic", "Still know it."))
    read = '{"cmd": ["cat", "src/a.py"]}'
    items: list[Any] = [
        {"type": "message", "role": "user", "content": "Read src/a.py"},
        {"type": "function_call", "call_id": "call_r", "name": "shell", "arguments": read},
        {"type": "function_call_output", "call_id": "call_r", "output": FILE},
    ]
    shell = [{"type": "function", "name": "shell", "parameters": {"type": "object"}}]
    with openai.OpenAI(base_url=base_url, api_key="k", max_retries=0) as client:
        ask: Any = {"model": "qwen3", "tools": shell, "prompt_cache_key": "codex-1"}
        first = client.responses.create(input=items, store=False, **ask)
        root = base_url.removesuffix("/v1")
        switched = httpx2.post(
            f"{root}/control/switch", json={"backend": "claude", "session": "codex-1"}
        )
        assert switched.status_code == 200
        items += [
            *[o.model_dump(exclude_none=True) for o in first.output],
            {"type": "message", "role": "user", "content": "Quote the file."},
        ]
        second = client.responses.create(input=items, store=False, **ask)
    assert second.output_text == "Still know it."
    assert upstream.requests[0].path == "/v1/chat/completions"
    sent = upstream.requests[1]
    assert sent.path == "/v1/messages"
    assert json.dumps(FILE)[1:-1] in json.dumps(sent.json()["messages"])

"""Pass-through to Anthropic backends through a running proxy: what the upstream receives,
what the client gets back, and thinking across a tool loop and a switch."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.support import (
    FILE_TEXT,
    anthropic_stream,
    decode_anthropic,
    openai_text_stream,
    request_body,
    running,
    sdk_final_message,
    sse_payloads,
    write_config,
)
from toolwire.events import StreamError
from toolwire.proxy import ProxySettings, load_settings
from toolwire.proxy.provenance import block_key
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores import SQLiteStore

THOUGHT = {"type": "thinking", "thinking": "Read a.py first.", "signature": "c2lnLWNsYXVkZQ=="}
READ = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "a.py"}}
CLIENT_HEADERS = {
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "interleaved-thinking-2025-05-14,context-management-2025-06-27",
    "x-api-key": "sk-client-key",
}


def _settings(tmp: Path, openai_url: str, anthropic_url: str, level: str | None) -> ProxySettings:
    """The test config, the ``claude`` backend at pass-through ``level`` (None: default)."""
    path = write_config(tmp, openai_url, anthropic_url)
    if level is not None:
        text = path.read_text().replace(
            'model = "claude-up"', f'model = "claude-up"\npassthrough = "{level}"'
        )
        path.write_text(text)
    return load_settings(path)


def _claude_body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    options = {"model": "claude,claude-up", "stream": True, **extra}
    body = request_body(list(messages), **options)
    body["messages"][0] = {
        "role": "user",
        "content": [{"type": "text", "text": "Read a.py", "cache_control": {"type": "ephemeral"}}],
    }
    body["thinking"] = {"type": "adaptive"}
    body["context_management"] = {"edits": [{"type": "clear_thinking_20251015"}]}
    return body


def _post(url: str, body: dict[str, Any]) -> httpx2.Response:
    reply = httpx2.post(f"{url}/v1/messages", json=body, headers=CLIENT_HEADERS, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply


def test_full_level_forwards_caching_thinking_and_betas_and_relays_bytes(tmp_path: Path) -> None:
    server_use = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "toolwire"},
    }
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://x",
                "title": "X",
                "encrypted_content": "ZW5j",
                "page_age": None,
            }
        ],
    }
    answer: list[dict[str, Any]] = [
        THOUGHT,
        server_use,
        result,
        {"type": "text", "text": "Found it."},
    ]
    stream = anthropic_stream(answer, "end_turn", ping=True)
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=stream), Reply(chunks=stream))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            reply = _post(url, _claude_body([{"role": "user", "content": "x"}]))
            final = sdk_final_message(url, "claude,claude-up", "search")
    sent = anthropic_up.requests[0]
    body = sent.json()
    assert body["model"] == "claude-up"
    assert body["thinking"] == {"type": "adaptive"}
    assert body["context_management"]["edits"][0]["type"] == "clear_thinking_20251015"
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert "metadata" in body
    assert sent.headers["anthropic-beta"] == CLIENT_HEADERS["anthropic-beta"]
    # The upstream's own bytes, server tool blocks and ping included, reach the client.
    assert reply.content == b"".join(stream)
    assert [b.type for b in final.content] == [
        "thinking",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]


def test_core_level_strips_what_compatible_servers_reject(tmp_path: Path) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(
            Reply(chunks=anthropic_stream([{"type": "text", "text": "ok"}], "end_turn"))
        )
        # 127.0.0.1 is not Anthropic's host: the default level is core.
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, None)) as url:
            _post(url, _claude_body([{"role": "user", "content": "x"}]))
    sent = anthropic_up.requests[0]
    body = sent.json()
    assert "cache_control" not in sent.body.decode()
    assert "x-anthropic-billing-header" not in sent.body.decode()
    assert not {"metadata", "context_management"} & set(body)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert body["max_tokens"] == 32000
    assert "anthropic-beta" not in sent.headers
    assert sent.headers["anthropic-version"] == "2023-06-01"


def test_thinking_follows_its_tool_loop_and_is_dropped_after_a_switch(tmp_path: Path) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "x"}]
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(
            Reply(chunks=anthropic_stream([THOUGHT, READ], "tool_use")),
            Reply(chunks=anthropic_stream([{"type": "text", "text": "42"}], "end_turn")),
            Reply(chunks=anthropic_stream([{"type": "text", "text": "still 42"}], "end_turn")),
        )
        openai_up.script(Reply(chunks=openai_text_stream("ok")))
        settings = _settings(tmp_path, openai_up.url, anthropic_up.url, "full")
        with running(settings) as url:
            switch = f"{url}/control/switch"
            httpx2.post(switch, json={"backend": "claude", "session": "sess-1"})
            _post(url, _claude_body(history))
            history += [
                {"role": "assistant", "content": [THOUGHT, READ]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_01", "content": FILE_TEXT}
                    ],
                },
            ]
            _post(url, _claude_body(history))  # the loop goes on: claude's own thinking back
            httpx2.post(switch, json={"backend": "local", "session": "sess-1"})
            _post(url, _claude_body(history, model="claude-opus-5-5"))
            httpx2.post(switch, json={"backend": "claude", "session": "sess-1"})
            _post(url, _claude_body(history, model="claude-opus-5-5"))
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    _, own, back = (r.json() for r in anthropic_up.requests)
    assert "toolwire_proxy_thinking_param_dropped_total 1" in metrics
    assert own["messages"][1]["content"][0] == THOUGHT
    assert own["thinking"] == {"type": "adaptive"}
    # After local and back, the turn is history before a switch: no signature is sent,
    # and since the loop it continues cannot open with thinking, thinking is turned off.
    assert THOUGHT["signature"] not in json.dumps(back)
    assert "thinking" not in back
    assert json.dumps(FILE_TEXT) in json.dumps(back)  # the tool context still made it
    assert THOUGHT["signature"] not in openai_up.requests[0].body.decode()


def test_a_completed_response_is_recorded_against_its_backend(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=anthropic_stream([THOUGHT, READ], "tool_use")))
        settings = _settings(tmp_path, openai_up.url, anthropic_up.url, "full")
        with running(settings, store=store) as url:
            _post(url, _claude_body([{"role": "user", "content": "x"}]))
    produced = store.load("sess-1").produced
    assert produced[block_key(READ) or ""] == "claude"
    assert produced[block_key(THOUGHT) or ""] == "claude"


def test_mid_stream_drop_keeps_whole_events_and_ends_with_an_error(tmp_path: Path) -> None:
    stream = anthropic_stream([{"type": "text", "text": "a" * 50}], "end_turn")
    data = b"".join(stream)
    cut = data.index(b"event: content_block_stop")
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        # The upstream stops in the middle of an event and closes the connection.
        anthropic_up.script(Reply(chunks=[data[: cut + 10]], drop_after=1))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            reply = _post(url, _claude_body([{"role": "user", "content": "x"}]))
    payloads = sse_payloads(reply.content)
    assert reply.content.startswith(data[:cut])
    assert payloads[-1]["type"] == "error"
    assert [p["type"] for p in payloads].count("error") == 1
    events = decode_anthropic(reply.content)
    assert any(isinstance(e, StreamError) for e in events)


def test_an_upstream_error_event_is_relayed_once(tmp_path: Path) -> None:
    stream = anthropic_stream([{"type": "text", "text": "hi"}], "end_turn")[:3]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    stream.append(sse([("error", error)]))
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=stream))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            reply = _post(url, _claude_body([{"role": "user", "content": "x"}]))
    payloads = sse_payloads(reply.content)
    assert [p for p in payloads if p["type"] == "error"] == [error]


def test_non_streaming_request_gets_one_message(tmp_path: Path) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=anthropic_stream([THOUGHT, READ], "tool_use")))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            body = _claude_body([{"role": "user", "content": "x"}], stream=False)
            reply = httpx2.post(f"{url}/v1/messages", json=body, headers=CLIENT_HEADERS, timeout=10)
    assert reply.status_code == 200
    message = reply.json()
    assert message["content"] == [THOUGHT, READ]
    assert message["stop_reason"] == "tool_use"
    assert anthropic_up.requests[0].json()["stream"] is True


@pytest.mark.parametrize("broken", [b"{not json", b"[1, 2]"])
def test_non_streaming_malformed_upstream_event_is_an_anthropic_error(
    tmp_path: Path, broken: bytes
) -> None:
    stream = anthropic_stream([{"type": "text", "text": "hi"}], "end_turn")
    stream.insert(2, b"event: content_block_delta\ndata: " + broken + b"\n\n")
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=stream))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            body = _claude_body([{"role": "user", "content": "x"}], stream=False)
            reply = httpx2.post(f"{url}/v1/messages", json=body, headers=CLIENT_HEADERS, timeout=10)
    assert reply.status_code == 500
    assert reply.json() == {
        "type": "error",
        "error": {"type": "api_error", "message": "malformed stream event: not a JSON object"},
    }


@pytest.mark.parametrize("stream", [True, False])
def test_an_upstream_error_event_fails_a_non_streaming_request_with_its_kind(
    tmp_path: Path, stream: bool
) -> None:
    events = anthropic_stream([{"type": "text", "text": "hi"}], "end_turn")[:3]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events.append(sse([("error", error)]))
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=events))
        with running(_settings(tmp_path, openai_up.url, anthropic_up.url, "full")) as url:
            body = _claude_body([{"role": "user", "content": "x"}], stream=stream)
            reply = httpx2.post(f"{url}/v1/messages", json=body, headers=CLIENT_HEADERS, timeout=10)
    if stream:  # already streaming: the error event is relayed as the upstream sent it
        assert reply.status_code == 200
        assert sse_payloads(reply.content)[-1] == error
    else:
        assert reply.status_code == 529
        assert reply.json() == error


def test_sqlite_updates_from_two_stores_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    stores = [SQLiteStore(path), SQLiteStore(path)]

    def work(store: SQLiteStore, worker: int) -> None:
        for n in range(50):
            key = f"k{worker}-{n}"

            def remember(state: SessionState, key: str = key) -> None:
                state.remember([key], f"b{worker}")

            store.update("s", remember)

    threads = [threading.Thread(target=work, args=(stores[i % 2], i)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state: SessionState = stores[0].load("s")
    assert len(state.produced) == 200  # a lost update would leave fewer


@pytest.mark.parametrize("level", ["full", "core"])
def test_count_tokens_counts_the_passed_through_body(tmp_path: Path, level: str) -> None:
    big = "y" * 4000
    with (
        FakeServer() as openai_up,
        FakeServer() as anthropic_up,
        running(_settings(tmp_path, openai_up.url, anthropic_up.url, level)) as url,
    ):
        body = _claude_body(
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": big},
            ]
        )
        reply = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
    assert reply.status_code == 200
    assert reply.json()["input_tokens"] >= 1000
    assert not anthropic_up.requests

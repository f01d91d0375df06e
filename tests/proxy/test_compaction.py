"""A request over its backend's window: compacted by the proxy (deterministic, the newest
tool result verbatim, within the window) or, with ``compaction = false``, refused with
Anthropic's "prompt is too long" (``compaction.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.support import (
    anthropic_text_stream,
    openai_text_stream,
    read_turn,
    request_body,
    running,
    windowed_config,
)
from toolwire.context import window_for
from toolwire.conversation import ConversationRecord
from toolwire.proxy import load_settings
from toolwire.proxy.compaction import first_digest
from toolwire.proxy.scale import CLAUDE_WINDOW, Scale
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores import SQLiteStore
from toolwire.proxy.translate import import_history

WINDOW = 16_000
ROOM = window_for("qwen3", context_window=WINDOW, max_tokens=8192).room  # [limits] max_tokens


def _file(n: int, size: int = 6_000) -> str:
    """The text of file ``n``: numbered lines, recognizably its own."""
    line = f"file {n}: " + "x" * 60 + "\n"
    return (line * (size // len(line) + 1))[:size]


def _history(files: int, *, prompt: str = "Read every file and report.") -> list[dict[str, Any]]:
    """A tool loop reading ``files`` files; it ends with the newest file's result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for n in range(files):
        messages += read_turn(f"toolu_{n:02d}", f"/src/f{n}.py", _file(n))
    return messages[:-1]  # the last read's result is the newest message


def _estimate(request: Received) -> int:
    """The proxy's estimate of an upstream body: a token per 4 characters of its JSON."""
    text = json.dumps(request.json(), ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / 4)


def _text(request: Received) -> str:
    return request.body.decode()


def _serve(reply: Reply) -> FakeServer:
    return FakeServer(respond=lambda received: reply)


@pytest.mark.parametrize("backend", ["local", "claude"])
def test_a_request_over_the_window_is_compacted(tmp_path: Path, backend: str) -> None:
    stream = openai_text_stream("ok") if backend == "local" else anthropic_text_stream("ok")
    with _serve(Reply(chunks=stream)) as upstream:
        config = windowed_config(tmp_path, upstream.url, local=WINDOW, claude=WINDOW)
        settings = load_settings(config, default_backend=backend)
        with running(settings) as url:
            body = request_body(_history(12), stream=True)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    assert reply.status_code == 200, reply.text
    (sent,) = upstream.requests
    assert _estimate(sent) <= ROOM < len(json.dumps(body)) / 4
    text = _text(sent)
    # The newest file is there verbatim (JSON-escaped as the body carries it), and the task.
    assert json.dumps(_file(11))[1:-1] in text
    assert "Read every file and report." in text
    assert f'toolwire_proxy_compactions_total{{backend="{backend}"}} 1' in metrics
    assert "toolwire_proxy_compacted_requests_total 1" in metrics


def test_compaction_is_the_same_bytes_and_continues(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            history = _history(12)
            for _ in range(2):
                httpx2.post(f"{url}/v1/messages", json=request_body(history), timeout=10)
            # The next turn: the model answered, the user asks again.
            later = [
                *history,
                {"role": "assistant", "content": "Read them all."},
                {"role": "user", "content": "Which file is last?"},
            ]
            httpx2.post(f"{url}/v1/messages", json=request_body(later), timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    first, _, continued = (r.json()["messages"] for r in upstream.requests)
    assert upstream.requests[0].body == upstream.requests[1].body
    # The compacted prefix stays as it was: the upstream's prompt cache still matches.
    assert continued[: len(first)] == first
    new = [m["content"] for m in continued[len(first) :]]
    assert new == ["Read them all.", "Which file is last?"]
    assert 'toolwire_proxy_compactions_total{backend="local"} 1' in metrics
    assert "toolwire_proxy_compacted_requests_total 3" in metrics


def test_a_request_that_fits_is_not_compacted(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            httpx2.post(f"{url}/v1/messages", json=request_body(_history(2)), timeout=10)
    tool_messages = [m for m in upstream.requests[0].json()["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [_file(0), _file(1)]


def test_compaction_off_answers_prompt_is_too_long(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        config = windowed_config(tmp_path, upstream.url, local=WINDOW, extra="compaction = false")
        with running(load_settings(config)) as url:
            body = request_body(_history(12), stream=True)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
            counted = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
    assert upstream.requests == []
    assert reply.status_code == 400
    error = reply.json()
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    message = error["error"]["message"]
    head, _, note = message.partition(" (toolwire: ")
    words = head.split()
    assert words[:4] == ["prompt", "is", "too", "long:"]
    assert int(words[4]) > ROOM
    assert words[5:] == ["tokens", ">", str(ROOM), "maximum"]
    assert note.startswith(f"backend 'local' has a window of {WINDOW} tokens (config)")
    # count_tokens just counts, scaled to Claude's 200k: more than all of it.
    assert counted.json()["input_tokens"] > CLAUDE_WINDOW


def test_count_tokens_counts_the_compacted_request(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            body = request_body(_history(12))
            counted = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
            httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    sent = _estimate(upstream.requests[0])
    assert counted.json()["input_tokens"] == Scale(CLAUDE_WINDOW, ROOM)(sent)
    assert 'toolwire_proxy_compactions_total{backend="local"}' not in metrics  # only counted


def test_a_history_the_client_compacted_starts_afresh(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        with running(settings) as url:
            httpx2.post(f"{url}/v1/messages", json=request_body(_history(12)), timeout=10)
            # Claude Code's own compaction: a summary, then the work goes on, as long again.
            fresh = _history(13, prompt="Summary: files 0 to 11 were read.")
            httpx2.post(f"{url}/v1/messages", json=request_body(fresh), timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    second = _text(upstream.requests[1])
    assert "Summary: files 0 to 11 were read." in second
    assert json.dumps(_file(12))[1:-1] in second
    assert 'toolwire_proxy_compactions_total{backend="local"} 2' in metrics


def test_the_compaction_is_stored_as_a_conversation_record(tmp_path: Path) -> None:
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        store = SQLiteStore(tmp_path / "s.db")
        with running(settings, store) as url:
            httpx2.post(f"{url}/v1/messages", json=request_body(_history(12)), timeout=10)
        (row,) = store._db.execute("SELECT state FROM sessions").fetchall()
        store.close()
    stored = json.loads(row[0])["compactions"]["local"]
    record = ConversationRecord.from_json(stored)
    assert record.point is not None
    assert (record.point.kind, record.point.target) == ("compaction", "local")
    sent = _text(upstream.requests[0])
    assert json.dumps(record.point.block)[1:-1] in sent  # the block that was sent
    assert SessionState.from_json(row[0]).to_json() == row[0]  # read back as written
    assert "compactions" not in SessionState().to_json()  # sessions without: as before


def test_a_compaction_stored_by_the_previous_version_still_continues(tmp_path: Path) -> None:
    history = _history(12)
    block = "[TOOLWIRE HANDOFF]\nAn older proxy's summary of files 0 to 10.\n[/TOOLWIRE HANDOFF]"
    end = len(history)
    # The format before the conversation record: [end, first digest, the compaction's fields].
    old = {"at": end, "tail_from": end - 1, "block": block, "cuts": [], "ratio": 1.0}
    legacy: dict[str, Any] = {
        "forced": None,
        "last": "local",
        "switches": [],
        "summaries": {},
        "produced": {},
    }
    legacy["compactions"] = {
        "local": [end, first_digest(import_history({"messages": history})), old]
    }
    with _serve(Reply(chunks=openai_text_stream("ok"))) as upstream:
        settings = load_settings(windowed_config(tmp_path, upstream.url, local=WINDOW))
        store = SQLiteStore(tmp_path / "s.db")
        store._db.execute("INSERT INTO sessions VALUES (?, ?)", ("sess-1", json.dumps(legacy)))
        with running(settings, store) as url:
            later = [*history, {"role": "assistant", "content": "Done."}]
            later.append({"role": "user", "content": "And now?"})
            httpx2.post(f"{url}/v1/messages", json=request_body(later), timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
        store.close()
    sent = upstream.requests[0].json()["messages"]
    assert sent[1]["content"].startswith(block)  # the stored block, not a new one
    assert [m["content"] for m in sent[-2:]] == ["Done.", "And now?"]
    assert 'toolwire_proxy_compactions_total{backend="local"}' not in metrics


def _too_long(tokens: int) -> Reply:
    message = f"prompt is too long: {tokens} tokens > {WINDOW} maximum"
    data = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    )
    return Reply(400, [data.encode()], content_type="application/json")


@pytest.mark.parametrize("compaction", [True, False])
def test_an_upstream_that_counts_more_gets_a_compacted_retry(
    tmp_path: Path, compaction: bool
) -> None:
    with FakeServer() as upstream:
        upstream.script(_too_long(17_000), Reply(chunks=anthropic_text_stream("ok")))
        extra = "" if compaction else "compaction = false"
        config = windowed_config(tmp_path, upstream.url, claude=WINDOW, extra=extra)
        with running(load_settings(config, default_backend="claude")) as url:
            body = request_body(_history(5), stream=True)  # fits by the proxy's estimate
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    if not compaction:  # the upstream's own answer, for Claude Code to compact on
        assert reply.status_code == 400
        assert reply.json()["error"]["message"].startswith("prompt is too long: 17000 tokens")
        assert len(upstream.requests) == 1
        return
    assert reply.status_code == 200, reply.text
    refused, retried = upstream.requests
    assert len(retried.body) < len(refused.body) / 2
    assert json.dumps(_file(4))[1:-1] in retried.body.decode()  # the newest file, whole
    assert 'toolwire_proxy_overflow_retries_total{backend="claude"} 1' in metrics
    assert 'toolwire_proxy_compactions_total{backend="claude"} 1' in metrics


def test_an_overflow_told_only_by_its_error_code_gets_a_compacted_retry(tmp_path: Path) -> None:
    # Some OpenAI-compatible servers say only ``code: context_length_exceeded`` with a
    # message of their own; the code is what marks the refusal as a full window.
    error = {
        "error": {
            "message": "Input validation error",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
    refusal = Reply(400, [json.dumps(error).encode()], content_type="application/json")
    with FakeServer() as upstream:
        upstream.script(refusal, Reply(chunks=openai_text_stream("ok")))
        config = windowed_config(tmp_path, upstream.url, local=WINDOW)
        with running(load_settings(config)) as url:
            body = request_body(_history(5), stream=True)  # fits by the proxy's estimate
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    assert reply.status_code == 200, reply.text
    refused, retried = upstream.requests  # compacted tighter than the first
    assert len(retried.body) < len(refused.body)
    assert 'toolwire_proxy_overflow_retries_total{backend="local"} 1' in metrics

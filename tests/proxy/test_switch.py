"""Routing, session identity, the session stores, and a switch between two upstreams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    FILE_TEXT,
    anthropic_text_stream,
    message_text,
    openai_text_stream,
    read_turn,
    request_body,
    running,
    settings_for,
    switch_cli,
    tool_loop_messages,
    write_config,
)
from toolwire.conversation import ConversationRecord
from toolwire.proxy import load_settings
from toolwire.proxy.routing import Route, route
from toolwire.proxy.state import SessionState, session_id, switch_point
from toolwire.proxy.stores import MemoryStore, SQLiteStore
from toolwire.proxy.translate import import_history


@pytest.mark.parametrize(
    ("metadata", "headers", "expected"),
    [
        ({"user_id": json.dumps({"device_id": "d", "session_id": "abc"})}, {}, "abc"),
        ({"user_id": "user_x_account__session_1234-abcd"}, {}, "1234-abcd"),
        ({}, {"x-claude-code-session-id": "hdr"}, "hdr"),
        ({"user_id": "plain"}, {}, "default"),
        (None, {}, "default"),
    ],
)
def test_session_id(metadata: object, headers: dict[str, str], expected: str) -> None:
    body = {"metadata": metadata} if metadata is not None else {}
    assert session_id(body, headers) == expected


def test_routing_order(tmp_path: Path) -> None:
    extra = '[proxy.models]\n"claude-haiku" = "claude,claude-small"\n"big" = "claude"'
    settings = load_settings(write_config(tmp_path, "http://a", "http://b", extra))
    fresh = SessionState()
    assert _pick(route("claude,claude-x", fresh, settings)) == ("claude", "claude-x")
    assert _pick(route("claude", fresh, settings)) == ("claude", "claude-up")
    assert _pick(route("claude-haiku", fresh, settings)) == ("claude", "claude-small")
    assert _pick(route("big", fresh, settings)) == ("claude", "claude-up")
    assert route("claude-opus-5-5", fresh, settings) == Route("local", "qwen3", "default")
    forced = SessionState(forced="claude")
    assert route("claude-opus-5-5", forced, settings).reason == "switched"
    assert _pick(route("local,other", forced, settings)) == ("local", "other")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_stores_keep_state(tmp_path: Path, kind: str) -> None:
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    state = store.load("s")
    assert state == SessionState()
    assert not state.record("local", 0)
    assert state.record("claude", 2)
    state.forced = "claude"
    store.save("s", state)
    again = store.load("s")
    assert again == SessionState("claude", "claude", switch_point(2, "claude"))
    if isinstance(store, SQLiteStore):
        store.close()
        reopened = SQLiteStore(tmp_path / "s.db")
        assert reopened.load("s") == again
        reopened.close()


def test_switch_sends_files_read_before_it_verbatim(tmp_path: Path) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        openai_up.script(Reply(chunks=openai_text_stream("I read it.")))
        anthropic_up.script(Reply(chunks=anthropic_text_stream("Still know it.")))
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        with running(settings) as url:
            history = tool_loop_messages()
            first = httpx2.post(
                f"{url}/v1/messages", json=request_body(history, stream=True), timeout=10
            )
            assert first.status_code == 200
            switched = httpx2.post(
                f"{url}/control/switch", json={"backend": "claude", "session": "sess-1"}
            )
            assert switched.json() == {"session": "sess-1", "backend": "claude"}
            history += [
                {"role": "assistant", "content": [{"type": "text", "text": "I read it."}]},
                {"role": "user", "content": "Quote the file."},
            ]
            second = httpx2.post(
                f"{url}/v1/messages", json=request_body(history, stream=True), timeout=10
            )
            assert second.status_code == 200
            assert b"Still know it." in second.content
            metrics = httpx2.get(f"{url}/metrics").text
        (sent,) = anthropic_up.requests
        wire = sent.json()
        results = [
            b
            for m in wire["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        assert [message_text(r["content"]) for r in results] == [FILE_TEXT]
        assert sent.path == "/v1/messages"
        assert "toolwire_proxy_switches_total 1" in metrics


def _pick(chosen: Route) -> tuple[str, str]:
    return chosen.backend, chosen.model


def test_switch_unknown_backend_is_400(tmp_path: Path) -> None:
    with running(settings_for(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")) as url:
        reply = httpx2.post(f"{url}/control/switch", json={"backend": "nope"})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"].startswith("unknown backend 'nope'")


@pytest.mark.e2e
def test_cli_switch_talks_to_a_running_proxy(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    with running(load_settings(config)) as url:
        done = switch_cli(url, config, "claude", "s9")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "session s9 -> claude"


def test_sqlite_store_keeps_a_switch_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=anthropic_text_stream("hello")))
        extra = f'store = "{db}"'
        with running(settings_for(tmp_path, openai_up.url, anthropic_up.url, extra)) as url:
            httpx2.post(f"{url}/control/switch", json={"backend": "claude", "session": "sess-1"})
        with running(settings_for(tmp_path, openai_up.url, anthropic_up.url, extra)) as url:
            body = request_body([{"role": "user", "content": "hi"}], stream=True)
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
        assert b"hello" in reply.content
        assert openai_up.requests == []
        assert len(anthropic_up.requests) == 1


def test_a_switch_stored_by_the_previous_version_sends_the_same_bytes(tmp_path: Path) -> None:
    history = tool_loop_messages()
    for n in range(3):
        history += read_turn(f"call_{n}", f"src/{n}.py", f"text of file {n}")
    history.append({"role": "user", "content": "Now the tests."})
    later = [*history, {"role": "assistant", "content": "I read it."}]
    later.append({"role": "user", "content": "Quote the file."})
    at = len(import_history({"messages": later}))  # switched at the request to claude
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        openai_up.script(Reply(chunks=openai_text_stream("I read it.")))
        anthropic_up.script(*[Reply(chunks=anthropic_text_stream("ok")) for _ in range(2)])
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        # This version, from the start: a turn on local, a switch, the next turn on claude.
        with running(settings) as url:
            httpx2.post(f"{url}/v1/messages", json=request_body(history), timeout=10)
            switch = {"backend": "claude", "session": "sess-1"}
            httpx2.post(f"{url}/control/switch", json=switch, timeout=10)
            httpx2.post(f"{url}/v1/messages", json=request_body(later), timeout=10)
        # The same session as the previous version stored it: the switch as (at, backend).
        legacy: dict[str, Any] = {"forced": "claude", "last": "claude", "produced": {}}
        legacy |= {"switches": [[at, "claude"]], "summaries": {"k": "an older summary"}}
        store = SQLiteStore(tmp_path / "s.db")
        store._db.execute("INSERT INTO sessions VALUES (?, ?)", ("sess-1", json.dumps(legacy)))
        with running(settings, store) as url:
            httpx2.post(f"{url}/v1/messages", json=request_body(later), timeout=10)
        (row,) = store._db.execute("SELECT state FROM sessions").fetchall()
        store.close()
    # Read once: the session is kept as a conversation record from then on.
    saved = json.loads(row[0])
    assert "switches" not in saved
    assert "summaries" not in saved
    point = ConversationRecord.from_json(saved["conversation"]).point
    assert point is not None
    assert (point.kind, point.at, point.target) == ("switch", at, "claude")
    assert point.block in restored_text(anthropic_up.requests[1].json())
    fresh, restored = anthropic_up.requests
    assert message_text(fresh.json()["messages"][0]["content"]).startswith("[TOOLWIRE HANDOFF]")
    assert restored.body == fresh.body


def restored_text(body: dict[str, Any]) -> str:
    """The text of a request's first message (where the handoff block is)."""
    return message_text(body["messages"][0]["content"])

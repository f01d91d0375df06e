"""Requests that must not crash the proxy: deep nesting, unusable session ids, lone
surrogates; the token on every route but ``/healthz``; a bounded memory store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    openai_text_stream,
    request_body,
    running,
    settings_for,
)
from toolwire.backends import encodable_json
from toolwire.proxy import create_app
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores import MemoryStore

PROMPT = [{"role": "user", "content": "hi"}]
ENDPOINTS = ["/v1/messages", "/v1/messages/count_tokens", "/control/switch"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The app in this process; an unexpected exception fails the test (no upstream runs:
    every request here is refused or only counted)."""
    tmp = tmp_path_factory.mktemp("proxy")
    app = create_app(settings_for(tmp, "http://127.0.0.1:9", "http://127.0.0.1:9"))
    with TestClient(app) as client:
        yield client


def _assert_400(reply: httpx2.Response, words: str) -> None:
    assert reply.status_code == 400, reply.text
    error = reply.json()
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    assert words in error["error"]["message"]


def _nested(depth: int, kinds: str) -> str:
    opening = "".join('{"a":' if k == "{" else "[" for k in (kinds * depth)[:depth])
    closing = "".join("}" if k == "{" else "]" for k in reversed((kinds * depth)[:depth]))
    return opening + "1" + closing


@settings(max_examples=20)
@given(
    depth=st.sampled_from([500, 1000, 3000, 100_000]),
    kinds=st.sampled_from(["[", "{", "[{", "{[["]),
    where=st.sampled_from(["body", "content", "metadata", "user_id", "tool_schema"]),
    endpoint=st.sampled_from(ENDPOINTS),
)
def test_deep_nesting_is_an_anthropic_400(
    client: TestClient, depth: int, kinds: str, where: str, endpoint: str
) -> None:
    value = _nested(depth, kinds)
    body = request_body(PROMPT)
    if where == "body":
        text = value
    elif where == "user_id":  # a JSON string Claude Code's session id is parsed from
        body["metadata"] = {"user_id": value}
        text = json.dumps(body)
    else:
        text = json.dumps(body)
        marker = {"content": '"hi"', "metadata": '"claude-opus-5-5"'}.get(where, '"x"')
        if where == "tool_schema":
            body["tools"] = [{"name": "t", "input_schema": {"type": "object"}}]
            text = json.dumps(body).replace('"object"', value, 1)
        else:
            text = text.replace(marker, value, 1)
    reply = client.post(endpoint, content=text.encode())
    # Never a crash: past Python's limit a 400 in Anthropic's shape; below it, whatever
    # the endpoint makes of the rest (here: no upstream to reach), in the same shape.
    assert reply.headers["content-type"].startswith("application/json"), reply.text
    assert reply.status_code == 200 or reply.json()["type"] == "error"
    parsed = not (where == "user_id" and endpoint == "/control/switch")  # a string to it
    if depth >= 3000 and parsed:
        _assert_400(reply, "nested too deeply")


SESSION_TEXT = st.text(alphabet=st.characters(exclude_categories=[]), max_size=300)


@settings(max_examples=60)
@given(sid=SESSION_TEXT, via=st.sampled_from(["user_id", "switch"]))
def test_any_session_id_is_served_or_an_anthropic_400(
    client: TestClient, sid: str, via: str
) -> None:
    if via == "switch":
        content = json.dumps({"backend": "local", "session": sid}).encode()
        reply = client.post("/control/switch", content=content)
    else:
        body = request_body(PROMPT, metadata={"user_id": json.dumps({"session_id": sid})})
        reply = client.post("/v1/messages/count_tokens", content=json.dumps(body).encode())
    usable = 1 <= len(sid) <= 256 and all(" " <= c <= "~" for c in sid)
    if usable or (via == "switch" and not sid):  # an empty one is the implicit session
        assert reply.status_code == 200, reply.text
    else:
        _assert_400(reply, "invalid session id")


@pytest.mark.parametrize(
    "sid", ["\ud83d", "a\nb", "x" * 257, "caf\u00e9", "\x00", "tab\there", "\u2028"]
)
def test_an_unusable_session_id_on_a_streamed_request_is_a_400(tmp_path: Path, sid: str) -> None:
    body = request_body(PROMPT, metadata={"user_id": json.dumps({"session_id": sid})})
    body["stream"] = True
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=openai_text_stream("hello")))
        with running(settings_for(tmp_path, upstream.url, upstream.url)) as url:
            reply = httpx2.post(f"{url}/v1/messages", content=json.dumps(body), timeout=10)
    _assert_400(reply, "invalid session id")
    assert upstream.requests == []


TEXT = st.text(alphabet=st.characters(exclude_categories=[]))
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)


@given(value=JSONISH)
def test_lone_surrogates_are_replaced_at_the_boundary(value: Any) -> None:
    raw = json.dumps(value).encode()  # ASCII: a lone surrogate is written as its escape
    parsed = encodable_json(raw, json.loads(raw))
    json.dumps(parsed, ensure_ascii=False).encode("utf-8")  # always encodable now
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return
    assert parsed == value  # text that was fine is untouched


def test_a_lone_surrogate_in_a_prompt_reaches_the_upstream_replaced(tmp_path: Path) -> None:
    body = request_body([{"role": "user", "content": "cut \ud83d here"}])
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=openai_text_stream("ok")))
        with running(settings_for(tmp_path, upstream.url, upstream.url)) as url:
            reply = httpx2.post(f"{url}/v1/messages", content=json.dumps(body), timeout=10)
    assert reply.status_code == 200, reply.text
    assert reply.json()["content"] == [{"type": "text", "text": "ok"}]
    sent = upstream.requests[0].body.decode("utf-8")
    assert "cut \ufffd here" in json.loads(sent)["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("authorization", "allowed"),
    [
        ("Bearer let-me-in", True),
        ("bearer let-me-in", True),
        ("BEARER  let-me-in ", True),
        ("Basic let-me-in", False),
        ("let-me-in", False),
        ("Bearer wrong", False),
    ],
)
def test_bearer_is_matched_in_any_case(tmp_path: Path, authorization: str, allowed: bool) -> None:
    app = create_app(settings_for(tmp_path, "http://a", "http://b", 'token = "let-me-in"'))
    with TestClient(app) as client:
        reply = client.get("/v1/models", headers={"authorization": authorization})
    assert reply.status_code == (200 if allowed else 401)


def test_metrics_need_the_token_and_healthz_does_not(tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, "http://a", "http://b", 'token = "let-me-in"'))
    with TestClient(app) as client:
        denied = client.get("/metrics")
        allowed = client.get("/metrics", headers={"x-api-key": "let-me-in"})
        health = client.get("/healthz")
    assert denied.status_code == 401
    assert denied.json()["error"]["type"] == "authentication_error"
    assert allowed.status_code == 200
    assert "toolwire_proxy_errors_total" in allowed.text
    assert health.status_code == 200


@given(
    bound=st.integers(1, 5),
    steps=st.lists(st.tuples(st.sampled_from("LS"), st.integers(0, 9)), max_size=40),
)
def test_the_memory_store_keeps_the_most_recently_used_sessions(
    bound: int, steps: list[tuple[str, int]]
) -> None:
    store = MemoryStore(max_sessions=bound)
    model: list[str] = []  # session ids stored, least recently used first
    for op, n in steps:
        sid = f"s{n}"
        if op == "S":
            store.save(sid, SessionState(forced=sid))
        else:
            state = store.load(sid)
            assert (state.forced == sid) == (sid in model)
            if sid not in model:
                continue
        if sid in model:
            model.remove(sid)
        model.append(sid)
        del model[:-bound]
        assert len(store) == len(model) <= bound
    for sid in model:
        assert store.load(sid).forced == sid

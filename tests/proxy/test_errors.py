"""Failures: upstream errors in Anthropic's shape, cut streams, disconnects, bad requests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import httpx2
import pytest
from starlette.testclient import TestClient

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    decode_anthropic,
    openai_tool_stream,
    request_body,
    running,
    settings_for,
    sse_payloads,
)
from toolwire.events import StreamError
from toolwire.proxy import create_app
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores import MemoryStore

T = TypeVar("T")

PROMPT = [{"role": "user", "content": "hi"}]


@pytest.fixture
def proxy_url(tmp_path: Path, upstream: FakeServer) -> Iterator[str]:
    extra = "max_body_bytes = 20000\npass_client_key = true"
    with running(settings_for(tmp_path, upstream.url, upstream.url, extra)) as url:
        yield url


def _error(status: int, message: str) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "x"}}).encode()
    return Reply(status, [body], content_type="application/json")


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limit_error"),
        (529, "overloaded_error"),
        (400, "invalid_request_error"),
        (500, "api_error"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_upstream_errors_in_anthropic_shape(
    upstream: FakeServer, proxy_url: str, status: int, kind: str, stream: bool
) -> None:
    upstream.script(_error(status, f"upstream says {status}"))
    body = request_body(PROMPT, stream=stream)
    reply = httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == status
    assert reply.json() == {
        "type": "error",
        "error": {"type": kind, "message": f"upstream says {status}"},
    }
    assert len(upstream.requests) == 1  # no retry: the client retries on its own


def test_passed_through_key_is_never_in_an_error(upstream: FakeServer, proxy_url: str) -> None:
    secret = "sk-ant-api03-clientsecret-0123456789"
    upstream.script(_error(401, f"invalid x-api-key: {secret}"))
    body = request_body(PROMPT, model="claude,claude-up")
    reply = httpx2.post(
        f"{proxy_url}/v1/messages", json=body, headers={"x-api-key": secret}, timeout=10
    )
    assert reply.status_code == 401
    assert reply.json()["error"]["type"] == "authentication_error"
    assert secret not in reply.text
    assert upstream.requests[0].headers["x-api-key"] == secret


def test_mid_stream_drop_ends_with_an_sse_error(upstream: FakeServer, proxy_url: str) -> None:
    upstream.script(Reply(chunks=openai_tool_stream(), drop_after=3))
    body = request_body(PROMPT, stream=True)
    reply = httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200
    payloads = sse_payloads(reply.content)
    assert payloads[0]["type"] == "message_start"
    assert payloads[-1]["type"] == "error"
    assert payloads[-1]["error"]["type"] == "api_error"
    assert "message_stop" not in [p["type"] for p in payloads]
    assert any(isinstance(e, StreamError) for e in decode_anthropic(reply.content))
    assert 'kind="upstream_stream"' in httpx2.get(f"{proxy_url}/metrics").text


def test_client_disconnect_cancels_upstream(upstream: FakeServer, proxy_url: str) -> None:
    first = openai_tool_stream()[0]
    upstream.script(Reply(chunks=[first], trickle=True))
    body = request_body(PROMPT, stream=True)
    with (
        httpx2.Client(timeout=10) as client,
        client.stream("POST", f"{proxy_url}/v1/messages", json=body) as reply,
    ):
        assert reply.status_code == 200
        next(reply.iter_bytes())
        left = time.monotonic()
    assert upstream.disconnected.wait(5)
    assert upstream.disconnected_at is not None
    assert upstream.disconnected_at - left < 3


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "the body is not JSON"),
        (b"[]", "the request body must be a JSON object"),
        (b'{"model": "m"}', "messages: a non-empty list is required"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "model: a non-empty string"),
        (
            b'{"model": "m", "messages": [{"role": "bot"}]}',
            "messages[0]: role must be user, assistant or system",
        ),
        (b'{"model": "nobody,x", "messages": [{"role": "user", "content": "x"}]}', "routes to"),
    ],
)
def test_malformed_requests_get_400(
    upstream: FakeServer, proxy_url: str, content: bytes, reason: str
) -> None:
    reply = httpx2.post(f"{proxy_url}/v1/messages", content=content, timeout=10)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert reason in error["message"]
    assert "\n" not in error["message"]
    assert upstream.requests == []


def test_body_size_limit(upstream: FakeServer, proxy_url: str) -> None:
    body = request_body([{"role": "user", "content": "x" * 30000}])
    reply = httpx2.post(f"{proxy_url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 413
    assert reply.json()["error"]["type"] == "request_too_large"


def test_token_guard(tmp_path: Path, upstream: FakeServer) -> None:
    settings = settings_for(tmp_path, upstream.url, upstream.url, 'token = "let-me-in"')
    with running(settings) as url:
        denied = httpx2.get(f"{url}/v1/models")
        allowed = httpx2.get(f"{url}/v1/models", headers={"authorization": "Bearer let-me-in"})
        as_key = httpx2.post(f"{url}/v1/messages/count_tokens", json=request_body(PROMPT))
    assert denied.status_code == 401
    assert denied.json()["error"]["type"] == "authentication_error"
    assert "let-me-in" not in denied.text
    assert allowed.status_code == 200
    assert as_key.status_code == 401


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"[1, 2]", "must be a JSON object"), (b"{oops", "not JSON"), (b"{}", "unknown backend")],
)
def test_switch_rejects_what_is_not_a_switch(proxy_url: str, content: bytes, reason: str) -> None:
    reply = httpx2.post(f"{proxy_url}/control/switch", content=content, timeout=10)
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert reason in reply.json()["error"]["message"]


def test_switch_needs_the_token(tmp_path: Path, upstream: FakeServer) -> None:
    settings = settings_for(tmp_path, upstream.url, upstream.url, 'token = "let-me-in"')
    with running(settings) as url:
        reply = httpx2.post(f"{url}/control/switch", json={"backend": "claude"}, timeout=10)
    assert reply.status_code == 401
    assert reply.json()["error"]["type"] == "authentication_error"


def test_a_file_permission_error_is_not_an_authentication_error(
    tmp_path: Path, upstream: FakeServer
) -> None:
    class Locked(MemoryStore):
        def update(self, session: str, change: Callable[[SessionState], T]) -> T:
            raise PermissionError(13, "Permission denied", "sessions.db")

    app = create_app(settings_for(tmp_path, upstream.url, upstream.url), Locked())
    with TestClient(app, raise_server_exceptions=False) as client:
        reply = client.post("/v1/messages", json=request_body(PROMPT))
    assert reply.status_code == 500
    assert "authentication_error" not in reply.text

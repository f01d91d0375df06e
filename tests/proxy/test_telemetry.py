"""OpenTelemetry spans of the proxy's requests (docs/proxy.md, "Telemetry"): the GenAI
attributes, the backend, the user and team, and never a word of the conversation."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import anthropic_text_stream, request_body, running, write_config
from toolwire.proxy import load_settings
from toolwire.proxy.app import Proxy
from toolwire.proxy.telemetry import ENDPOINT_ENVS, Telemetry

pytest.importorskip("opentelemetry.sdk", reason="OpenTelemetry is not installed (toolwire[otel])")
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

PROMPT = "Summarise the quarterly zanzibar flamingo ledger"
SYSTEM = "You guard the obsidian marmalade vault"
ANSWER = "The periwinkle accordion balance is nine"
WORDS = [w.lower() for w in f"{PROMPT} {SYSTEM} {ANSWER}".split() if len(w) > 4]


@dataclass(frozen=True)
class _Person:
    user: str
    team: str | None


def _body(**extra: Any) -> dict[str, Any]:
    body = request_body([{"role": "user", "content": [{"type": "text", "text": PROMPT}]}])
    body.update(system=SYSTEM, model="claude,claude-up", max_tokens=2048, **extra)
    return body


def _texts(span: ReadableSpan) -> list[str]:
    """Every string a span carries: its name, attribute values, events and status."""
    out = [span.name, str(span.status.description)]
    for attributes in [span.attributes or {}, *((e.attributes or {}) for e in span.events)]:
        out += [str(v) for v in attributes.values()]
    out += [e.name for e in span.events]
    return out


def _leaked(texts: list[str]) -> list[str]:
    joined = " ".join(texts).lower()
    return [w for w in WORDS if w in joined]


def test_a_span_per_request_carries_the_genai_attributes_and_no_message_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key store's answer for the request's key (Proxy.person).
    monkeypatch.setattr(Proxy, "person", lambda self, request: _Person("ana", "core"))
    exporter = InMemorySpanExporter()
    with FakeServer() as upstream:
        upstream.script(
            Reply(chunks=anthropic_text_stream(ANSWER)), Reply(chunks=anthropic_text_stream(ANSWER))
        )
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url))
        with running(settings, telemetry=Telemetry.exporting(exporter)) as url:
            streamed = httpx2.post(f"{url}/v1/messages", json=_body(stream=True), timeout=10)
            whole = httpx2.post(f"{url}/v1/messages", json=_body(), timeout=10)
    assert ANSWER in streamed.text
    assert ANSWER in whole.text
    spans = exporter.get_finished_spans()
    assert len(spans) == 2
    for span in spans:
        attributes = dict(span.attributes or {})
        assert span.kind == SpanKind.CLIENT
        assert span.status.status_code != StatusCode.ERROR
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == attributes["gen_ai.system"] == "anthropic"
        assert attributes["gen_ai.request.model"] == "claude,claude-up"
        assert attributes["gen_ai.response.model"] == "claude-up"
        assert attributes["gen_ai.request.max_tokens"] == 2048
        # What the fake upstream reported (anthropic_text_stream: 10 in, 3 out).
        assert attributes["gen_ai.usage.input_tokens"] == 10
        assert attributes["gen_ai.usage.output_tokens"] == 3
        assert tuple(attributes["gen_ai.response.finish_reasons"]) == ("end_turn",)  # type: ignore[arg-type]
        assert (attributes["toolwire.backend"], attributes["toolwire.route"]) == (
            "claude",
            "explicit",
        )
        assert (attributes["user.id"], attributes["toolwire.team"]) == ("ana", "core")
        assert _leaked(_texts(span)) == []
    assert [s.attributes["toolwire.stream"] for s in spans if s.attributes] == [True, False]


def test_a_refused_request_ends_its_span_as_an_error(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    with FakeServer() as upstream:
        refusal = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
        upstream.script(Reply(status=429, chunks=[refusal], content_type="application/json"))
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url))
        with running(settings, telemetry=Telemetry.exporting(exporter)) as url:
            reply = httpx2.post(f"{url}/v1/messages", json=_body(), timeout=10)
    assert reply.status_code == 429
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "rate_limit_error"
    assert "user.id" not in (span.attributes or {})  # the single token names nobody
    assert _leaked(_texts(span)) == []


def test_spans_go_over_otlp_when_the_endpoint_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ENDPOINT_ENVS:
        monkeypatch.delenv(name, raising=False)
    assert Telemetry.from_env() is None
    with FakeServer() as collector, FakeServer() as upstream:
        collector.respond = lambda received: Reply(content_type="application/x-protobuf")
        upstream.script(Reply(chunks=anthropic_text_stream(ANSWER)))
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        telemetry = Telemetry.from_env()
        assert telemetry is not None
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url))
        with running(settings, telemetry=telemetry) as url:
            reply = httpx2.post(f"{url}/v1/messages", json=_body(stream=True), timeout=10)
        telemetry.close()  # what the app's shutdown does: send what is queued
        sent = list(collector.requests)
    assert reply.status_code == 200
    assert [(r.method, r.path) for r in sent] == [("POST", "/v1/traces")]
    assert sent[0].headers["content-type"] == "application/x-protobuf"
    assert b"gen_ai.usage.output_tokens" in sent[0].body
    assert b"toolwire-proxy" in sent[0].body  # service.name
    assert _leaked([sent[0].body.decode("utf-8", "replace")]) == []


def test_without_an_endpoint_the_proxy_loads_no_opentelemetry(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    script = (
        "import sys\n"
        "from toolwire.proxy import create_app, load_settings\n"
        f"app = create_app(load_settings({str(config)!r}))\n"
        "assert app.state.proxy.telemetry is None\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

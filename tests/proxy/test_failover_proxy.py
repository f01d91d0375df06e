"""Failover through the running proxy, with fake upstreams (docs/proxy.md, "Failover")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply, sse
from tests.proxy.support import (
    anthropic_stream,
    anthropic_text_stream,
    openai_text_stream,
    request_body,
    running,
    sse_payloads,
    write_config,
)
from tests.proxy.test_compaction import _history, _too_long
from toolwire.config.schema import ConfigError
from toolwire.proxy import load_settings
from toolwire.proxy.settings import ProxySettings

HELLO = [{"role": "user", "content": "hello"}]
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _settings(
    tmp: Path, openai_url: str, anthropic_url: str, *, cooldown: float = 30.0, sticky: bool = False
) -> ProxySettings:
    """``claude`` (Anthropic) is the mapped primary, ``local`` (OpenAI Chat) its fallback."""
    extra = f'failover_cooldown = {cooldown}\n[proxy.models]\n"claude-opus-5-5" = "claude"'
    config = write_config(tmp, openai_url, anthropic_url, extra)
    table = f'model = "claude-up"\nfallbacks = ["local"]\nsticky = {str(sticky).lower()}'
    config.write_text(config.read_text().replace('model = "claude-up"', table))
    return load_settings(config)


def _post(url: str, **extra: object) -> httpx2.Response:
    body = request_body(HELLO, **extra)
    return httpx2.post(f"{url}/v1/messages", json=body, timeout=10)


def _metrics(url: str) -> str:
    return httpx2.get(f"{url}/metrics", timeout=5).text


def test_a_rate_limited_primary_fails_over_then_is_skipped_while_cooling(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(Reply(429, [b'{"error": {"message": "slow down"}}'], {"retry-after": "1"}))
        secondary.script(
            Reply(chunks=openai_text_stream("from local")),
            Reply(chunks=openai_text_stream("still local")),
        )
        with running(_settings(tmp_path, secondary.url, primary.url)) as url:
            first = _post(url, stream=True)
            second = _post(url)  # not streamed: the header is there too
            metrics = _metrics(url)
    assert first.status_code == 200, first.text
    assert first.headers["x-toolwire-backend"] == "local"
    assert "from local" in first.text
    assert second.status_code == 200, second.text
    assert second.headers["x-toolwire-backend"] == "local"
    assert second.json()["content"][0]["text"] == "still local"
    assert len(primary.requests) == 1  # once: no retry on a backend with fallbacks
    assert 'toolwire_proxy_failovers_total{backend="claude"} 1' in metrics
    assert 'toolwire_proxy_cooldowns_total{backend="claude"} 1' in metrics
    assert 'toolwire_proxy_cooldown_skips_total{backend="claude"} 1' in metrics


def test_overloaded_and_a_reset_fail_over_and_the_primary_is_tried_again(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(
            Reply(529, [b'{"type": "error", "error": {"type": "overloaded_error"}}']),
            Reply(chunks=[sse([("error", OVERLOADED)])]),  # a 200 whose stream says so
            Reply(chunks=[], drop_after=0),  # the connection dropped before any byte
            Reply(reset=True),  # not even a status line
            Reply(chunks=anthropic_text_stream("primary is back")),
        )
        secondary.script(*[Reply(chunks=openai_text_stream(f"local {i}")) for i in range(4)])
        # A tiny cooldown: each request tries the primary first again.
        with running(_settings(tmp_path, secondary.url, primary.url, cooldown=0.001)) as url:
            answers = [_post(url, stream=True) for _ in range(5)]
            metrics = _metrics(url)
    assert [a.headers["x-toolwire-backend"] for a in answers] == ["local"] * 4 + ["claude"]
    assert "primary is back" in answers[4].text
    assert len(primary.requests) == 5
    assert 'toolwire_proxy_failovers_total{backend="claude"} 4' in metrics


def test_no_failover_after_the_first_byte(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(Reply(chunks=anthropic_text_stream("partial answer")[:3], drop_after=3))
        with running(_settings(tmp_path, secondary.url, primary.url)) as url:
            answer = _post(url, stream=True)
            metrics = _metrics(url)
    assert answer.status_code == 200
    assert answer.headers["x-toolwire-backend"] == "claude"
    payloads = sse_payloads(answer.content)
    assert payloads[0]["type"] == "message_start"
    assert payloads[-1]["type"] == "error"
    assert secondary.requests == []
    assert "toolwire_proxy_failovers_total{" not in metrics  # no backend failed over


def test_a_refused_request_does_not_fail_over(tmp_path: Path) -> None:
    refusal = b'{"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}'
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(Reply(400, [refusal]))
        with running(_settings(tmp_path, secondary.url, primary.url)) as url:
            answer = _post(url, stream=True)
    assert answer.status_code == 400
    assert answer.headers["x-toolwire-backend"] == "claude"
    assert secondary.requests == []


def test_every_backend_failing_answers_the_last_error(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(Reply(529, [b'{"error": {"type": "overloaded_error"}}']))
        secondary.script(Reply(503, [b'{"error": {"message": "down"}}']))
        with running(_settings(tmp_path, secondary.url, primary.url)) as url:
            answer = _post(url, stream=True)
            metrics = _metrics(url)
    assert answer.status_code == 503
    assert answer.headers["x-toolwire-backend"] == "local"
    assert answer.json()["type"] == "error"
    assert 'toolwire_proxy_cooldowns_total{backend="local"} 1' in metrics


def test_sticky_failover_switches_the_session(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as secondary:
        primary.script(Reply(429, [b"{}"]))
        secondary.script(*[Reply(chunks=openai_text_stream("local")) for _ in range(2)])
        settings = _settings(tmp_path, secondary.url, primary.url, cooldown=0.001, sticky=True)
        with running(settings) as url:
            answers = [_post(url, stream=True) for _ in range(2)]
    assert [a.headers["x-toolwire-backend"] for a in answers] == ["local", "local"]
    assert len(primary.requests) == 1  # cooled down, but the session was switched


def test_an_unknown_fallback_is_a_one_line_error_at_start(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    text = config.read_text().replace('model = "claude-up"', 'model = "x"\nfallbacks = ["glm"]')
    config.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_settings(config)
    message = str(raised.value)
    assert "backends.claude.fallbacks: 'glm' is not another backend" in message
    assert "\n" not in message


def test_the_fallback_never_gets_the_primary_thinking(tmp_path: Path) -> None:
    thought = {"type": "thinking", "thinking": "Read it.", "signature": "c2lnbmVkLXByaW1hcnk="}
    read = {"type": "tool_use", "id": "toolu_01P", "name": "Read", "input": {"file_path": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01P", "content": "alpha"}
    history: list[dict[str, Any]] = [*HELLO, {"role": "assistant", "content": [thought, read]}]
    history.append({"role": "user", "content": [result]})
    with FakeServer() as primary, FakeServer() as backup, FakeServer() as unused:
        primary.script(
            Reply(chunks=anthropic_stream([thought, read], "tool_use")),
            Reply(429, [b"{}"]),
        )
        backup.script(Reply(chunks=anthropic_text_stream("alpha it is")))
        extra = (
            'failover_cooldown = 30.0\n[proxy.models]\n"claude-opus-5-5" = "claude"\n'
            f'[backends.backup]\nprovider = "anthropic"\nbase_url = "{backup.url}"\n'
            'model = "backup-up"\npassthrough = "full"'
        )
        config = write_config(tmp_path, unused.url, primary.url, extra)
        table = 'model = "claude-up"\npassthrough = "full"\nfallbacks = ["backup"]'
        config.write_text(config.read_text().replace('model = "claude-up"', table))
        with running(load_settings(config)) as url:
            assert _post(url, stream=True).status_code == 200
            body = request_body(history, stream=True)
            answer = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert answer.headers["x-toolwire-backend"] == "backup"
    assert "alpha it is" in answer.text
    # The primary was sent its own thinking back; the backup was not.
    assert thought["signature"] in primary.requests[1].body.decode()
    (sent,) = backup.requests
    assert thought["signature"] not in sent.body.decode()
    assert "alpha" in sent.body.decode()  # the tool result went, in the handoff or as is


def test_a_fallback_that_counts_more_gets_the_compacted_retry(tmp_path: Path) -> None:
    with FakeServer() as primary, FakeServer() as backup, FakeServer() as unused:
        primary.script(Reply(429, [b"{}"]))
        backup.script(_too_long(17_000), Reply(chunks=anthropic_text_stream("ok")))
        extra = (
            '[proxy.models]\n"claude-opus-5-5" = "claude"\n'
            f'[backends.backup]\nprovider = "anthropic"\nbase_url = "{backup.url}"\n'
            'model = "backup-up"'
        )
        config = write_config(tmp_path, unused.url, primary.url, extra)
        table = 'model = "claude-up"\nfallbacks = ["backup"]'
        config.write_text(config.read_text().replace('model = "claude-up"', table))
        with running(load_settings(config)) as url:
            body = request_body(_history(5), stream=True)
            answer = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
            metrics = _metrics(url)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-toolwire-backend"] == "backup"
    assert len(primary.requests) == 1
    refused, retried = backup.requests
    assert len(retried.body) < len(refused.body)
    assert 'toolwire_proxy_overflow_retries_total{backend="backup"} 1' in metrics

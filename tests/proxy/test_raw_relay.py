"""The pass-through relay of an Anthropic upstream's own bytes, against hostile streams: a
malformed event, events after the end, an error event mid-stream, any chunking."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import anthropic_stream, request_body, running, settings_for, sse_payloads
from toolwire.decode.anthropic import AnthropicDecoder
from toolwire.events import Event
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.raw_relay import MALFORMED, RawRelay
from toolwire.proxy.upstream import Opened

STREAM = anthropic_stream(
    [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}], "end_turn"
)
BROKEN = [b"{not json", b"[1, 2]", b"7", b'"text"', b"null", b"{"]
ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _event(data: bytes, name: str = "content_block_delta") -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


def _relayed(events: list[bytes], cuts: list[int]) -> bytes:
    """What the relay sends for an upstream body made of ``events``, read in pieces cut
    at ``cuts`` (offsets), the way the HTTP backend feeds its tap and decoder."""
    body = b"".join(events)
    bounds = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    chunks = [body[a:b] for a, b in itertools.pairwise(bounds)]
    relay = RawRelay()
    decoder = AnthropicDecoder()
    relay.attach(decoder)

    async def upstream() -> AsyncGenerator[Event, None]:
        for chunk in chunks:
            relay.tap(chunk)
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    async def run() -> bytes:
        rest = upstream()
        opened = Opened(await rest.__anext__(), rest, 0.0)
        return b"".join([piece async for piece in relay._relay(opened, Metrics())])

    return asyncio.run(run())


def _check_ends_once(out: bytes) -> list[dict[str, Any]]:
    """Every event is a JSON object and the stream's end (message_stop or error) is its
    last event, once."""
    payloads = sse_payloads(out)
    kinds = [p["type"] for p in payloads]
    ends = [i for i, kind in enumerate(kinds) if kind in ("message_stop", "error")]
    assert ends == [len(kinds) - 1], kinds
    return payloads


@given(
    position=st.integers(1, len(STREAM) - 1),
    broken=st.sampled_from(BROKEN),
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_a_malformed_event_ends_the_stream_with_one_clean_error(
    position: int, broken: bytes, cuts: list[int]
) -> None:
    events = [*STREAM[:position], _event(broken), *STREAM[position:]]
    out = _relayed(events, cuts)
    payloads = _check_ends_once(out)
    assert payloads[-1] == {"type": "error", "error": {"type": "api_error", "message": MALFORMED}}
    # The events before the malformed one went out as the upstream sent them.
    before = b"".join(STREAM[:position])
    assert out.startswith(before)
    assert out[len(before) :].startswith(b"event: error\n")


@given(
    after=st.lists(
        st.sampled_from([_event(b"{oops"), _event(json.dumps(ERROR).encode(), "error"), *STREAM]),
        min_size=1,
        max_size=4,
    ),
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_nothing_follows_message_stop(after: list[bytes], cuts: list[int]) -> None:
    out = _relayed([*STREAM, *after], cuts)
    _check_ends_once(out)
    assert out == b"".join(STREAM)


@given(position=st.integers(1, len(STREAM) - 1), cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_an_upstream_error_event_is_the_end(position: int, cuts: list[int]) -> None:
    error = _event(json.dumps(ERROR).encode(), "error")
    out = _relayed([*STREAM[:position], error, *STREAM[position:]], cuts)
    payloads = _check_ends_once(out)
    assert payloads[-1] == ERROR
    assert out == b"".join([*STREAM[:position], error])


@pytest.mark.parametrize("position", [3, 5])
def test_an_event_nested_too_deeply_ends_the_stream_with_an_error(position: int) -> None:
    deep = _event(b"[" * 100_000)
    before = len(b"".join(STREAM[:position]))  # the deep event arrives in a later read
    out = _relayed([*STREAM[:position], deep, *STREAM[position:]], [before])
    payloads = _check_ends_once(out)
    assert payloads[-1] == {"type": "error", "error": {"type": "api_error", "message": MALFORMED}}
    assert out.startswith(b"".join(STREAM[:position]))


def test_a_stream_cut_after_message_delta_gets_its_message_stop() -> None:
    out = _relayed(STREAM[:-1], [])
    assert sse_payloads(out)[-1] == {"type": "message_stop"}
    assert out.startswith(b"".join(STREAM[:-1]))


def test_a_malformed_event_through_the_proxy(tmp_path: Path) -> None:
    events = [*STREAM[:3], _event(b"{not json"), *STREAM[3:]]
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=events))
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        with running(settings) as url:
            body = request_body([{"role": "user", "content": "x"}], model="claude,claude-up")
            body["stream"] = True
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    assert reply.status_code == 200
    payloads = _check_ends_once(reply.content)
    assert payloads[-1]["error"] == {"type": "api_error", "message": MALFORMED}
    assert reply.content.startswith(b"".join(STREAM[:3]))


@pytest.mark.parametrize("stream", [True, False])
def test_a_first_event_nested_too_deeply_is_a_malformed_event(tmp_path: Path, stream: bool) -> None:
    """Past the JSON parser's depth an event is malformed like any other, also the first."""
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(Reply(chunks=[_event(b"[" * 100_000), *STREAM]))
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        with running(settings) as url:
            body = request_body([{"role": "user", "content": "x"}], model="claude,claude-up")
            body["stream"] = stream
            reply = httpx2.post(f"{url}/v1/messages", json=body, timeout=10)
    malformed = {"type": "api_error", "message": MALFORMED}
    if stream:
        assert reply.status_code == 200
        assert _check_ends_once(reply.content)[-1] == {"type": "error", "error": malformed}
    else:
        assert reply.status_code == 500
        assert reply.json()["error"] == malformed

"""The replay backend (cassettes) and the recorder (live run -> cassette, secrets redacted)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.backends.support import FAST, KEY, REQUEST, anthropic_body, collect, find
from tests.fakes.http import FakeServer, Reply, pieces
from tests.helpers import needs_shared
from toolwire.backends import ReplayBackend, create_backend
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.record import RecordingBackend
from toolwire.config.schema import BackendConfig
from toolwire.decode import decoder_for
from toolwire.errors import ProtocolError, TransportError
from toolwire.events import Event, MessageEnd, ToolCallEnd, ToolCallStart


def _cassette(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _decoded(provider: str, body: bytes) -> list[Event]:
    decoder = decoder_for(provider)
    return decoder.feed(body) + decoder.close()


@needs_shared
def test_replay_serves_responses_in_order_then_says_it_ran_out(tmp_path: Path) -> None:
    body = anthropic_body().decode()
    text = 'data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}\n\n'
    path = _cassette(
        tmp_path, {"provider": "anthropic", "body": body}, {"provider": "openai-chat", "body": text}
    )
    replay = ReplayBackend(name="replay", cassette=path)
    first = collect(replay.stream(REQUEST))
    assert first == _decoded("anthropic", body.encode())
    second = collect(replay.stream(REQUEST))
    assert second[-1] == MessageEnd("end_turn")
    assert replay.requests == [REQUEST, REQUEST]
    with pytest.raises(TransportError, match=r"the cassette has no more responses \(2 served\)"):
        collect(replay.stream(REQUEST))


@needs_shared
def test_replay_paces_chunks_so_the_first_events_come_early(tmp_path: Path) -> None:
    body = anthropic_body().decode()
    row = {"provider": "anthropic", "body": body, "chunk_size": 200, "chunk_delay_ms": 30}
    replay = ReplayBackend(name="replay", cassette=_cassette(tmp_path, row))

    async def run() -> tuple[float, float, list[Event]]:
        began = time.monotonic()
        events: list[Event] = []
        first = 0.0
        async for event in replay.stream(REQUEST):
            first = first or time.monotonic() - began
            events.append(event)
        return first, time.monotonic() - began, events

    first, total, events = asyncio.run(run())
    chunks = -(-len(body.encode()) // 200)
    assert total >= (chunks - 1) * 0.03 * 0.9
    assert first < total / 2
    assert events == _decoded("anthropic", body.encode())


@needs_shared
def test_replay_can_be_cancelled_mid_response(tmp_path: Path) -> None:
    row = {
        "provider": "anthropic",
        "body": anthropic_body().decode(),
        "chunk_size": 1000,
        "chunk_delay_ms": 2000,
    }
    replay = ReplayBackend(name="replay", cassette=_cassette(tmp_path, row))

    async def run() -> float:
        stream = replay.stream(REQUEST)
        await anext(stream)
        began = time.monotonic()
        await stream.aclose()
        return time.monotonic() - began

    assert asyncio.run(run()) < 0.5


def test_replay_with_a_text_tool_format(tmp_path: Path) -> None:
    content = '<tool_call>\n{"name": "Read", "arguments": {"file_path": "x"}}\n</tool_call>'
    body = json.dumps(
        {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": "stop"}]}
    )
    path = _cassette(
        tmp_path, {"provider": "openai-chat", "body": f"data: {body}\n\n", "tool_format": "hermes"}
    )
    events = collect(ReplayBackend(name="r", cassette=path).stream(REQUEST))
    assert find(events, ToolCallStart)[0].name == "Read"
    assert events[-1] == MessageEnd("tool_use")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"provider": "cohere", "body": ""}', "line 2: provider must be one of"),
        ('{"provider": "gemini", "body": 3}', "line 2: body must be a string"),
        ('{"provider": "gemini", "body": "", "chunk_size": 0}', "chunk_size must be a positive"),
    ],
)
def test_a_bad_cassette_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"provider": "gemini", "body": ""}\n' + line + "\n")
    with pytest.raises(ProtocolError, match=message):
        collect(ReplayBackend(name="r", cassette=path).stream(REQUEST))


def test_a_missing_cassette_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="cannot read the cassette"):
        collect(ReplayBackend(name="r", cassette=tmp_path / "nope.jsonl").stream(REQUEST))


# -- recording -------------------------------------------------------------------------


@needs_shared
def test_recorder_writes_one_redacted_line_per_response_and_it_replays(tmp_path: Path) -> None:
    secret_text = b'"text":"token sk-live-0123456789abcdef and Authorization: Bearer abcdefghijkl"'
    body = anthropic_body().replace(b'"text":""', secret_text, 1)
    out = tmp_path / "rec" / "cassette.jsonl"
    with FakeServer() as server:
        server.script(Reply(chunks=pieces(body, 80)), Reply(chunks=[anthropic_body()]))
        live = AnthropicBackend(
            name="claude", model="m", api_key=KEY, base_url=server.url, settings=FAST
        )
        recorder = RecordingBackend(live, out, secrets=[KEY])
        live_events = collect(recorder.stream(REQUEST)) + collect(recorder.stream(REQUEST))
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    row = json.loads(lines[0])
    assert row["provider"] == "anthropic"
    assert "sk-live" not in row["body"]
    assert "abcdefghijkl" not in row["body"]
    assert "[REDACTED]" in row["body"]
    replayed = ReplayBackend(name="replay", cassette=out)
    again = collect(replayed.stream(REQUEST)) + collect(replayed.stream(REQUEST))
    ends = [e for e in live_events if isinstance(e, ToolCallEnd)]
    assert [e for e in again if isinstance(e, ToolCallEnd)] == ends


@needs_shared
def test_recorder_writes_what_arrived_when_the_stream_is_closed_early(tmp_path: Path) -> None:
    source = _cassette(
        tmp_path, {"provider": "anthropic", "body": anthropic_body().decode(), "chunk_size": 100}
    )
    out = tmp_path / "copy.jsonl"
    recorder = create_backend(
        BackendConfig(name="r", provider="replay", cassette=str(source)), record=out
    )

    async def run() -> None:
        stream = recorder.stream(REQUEST)
        await anext(stream)
        await stream.aclose()

    asyncio.run(run())
    (line,) = out.read_text().splitlines()
    body = json.loads(line)["body"]
    assert 0 < len(body) < len(anthropic_body())
    assert anthropic_body().decode().startswith(body)

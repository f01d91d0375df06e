"""``toolwire.testing.streams``: Anthropic streams and cassettes from normalized events."""

from __future__ import annotations

import json
from pathlib import Path

from toolwire.backends.replay import load_cassette
from toolwire.decode import decoder_for
from toolwire.events import Event, MessageEnd, TextDelta, ThinkingDelta, ToolCallEnd
from toolwire.proxy.encode import accumulate
from toolwire.testing.streams import (
    anthropic_payloads,
    anthropic_sse,
    cassette_line,
    end,
    sse_chunks,
    text,
    thinking,
    tool_call,
    with_blocks,
    write_cassette,
)

ARGS = {"file_path": "src/app.py", "limit": 20}


def _turn() -> list[Event]:
    return [
        *thinking("Read it first.", "sig-1"),
        *text("Reading the file now.", by_word=True),
        *tool_call("toolu_1", "Read", ARGS, piece=5),
        end("tool_use", 12),
    ]


def test_the_decoder_reads_back_what_the_events_said() -> None:
    decoder = decoder_for("anthropic")
    events = decoder.feed(anthropic_sse(_turn())) + decoder.close()
    said = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert said == "Reading the file now."
    assert [e.signature for e in events if isinstance(e, ThinkingDelta) and e.signature] == [
        "sig-1"
    ]
    assert [e.arguments for e in events if isinstance(e, ToolCallEnd)] == [ARGS]
    last = events[-1]
    assert isinstance(last, MessageEnd)
    assert last.stop_reason == "tool_use"


def test_the_same_events_give_the_same_bytes() -> None:
    assert anthropic_sse(_turn(), message_id="msg_x") == anthropic_sse(_turn(), message_id="msg_x")
    assert b'"id":"msg_x"' in anthropic_sse(_turn(), message_id="msg_x")


def test_pieces_and_words_are_separate_deltas() -> None:
    payloads = anthropic_payloads(_turn(), ping=True)
    assert [p["type"] for p in payloads[:2]] == ["message_start", "ping"]
    deltas = [p["delta"] for p in payloads if p["type"] == "content_block_delta"]
    assert [d["text"] for d in deltas if d["type"] == "text_delta"] == [
        "Reading ",
        "the ",
        "file ",
        "now.",
    ]
    pieces = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert "".join(pieces) == json.dumps(ARGS)
    assert {len(p) for p in pieces[:-1]} == {5}


def test_whole_blocks_go_in_between_and_move_the_later_indices() -> None:
    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
    payloads = with_blocks(anthropic_payloads([*text("a"), *text("b"), end()]), 0, [search])
    message = accumulate(payloads)
    assert [b["type"] for b in message["content"]] == ["server_tool_use", "text"]
    assert message["content"][1]["text"] == "ab"
    starts = [p["index"] for p in payloads if p["type"] == "content_block_start"]
    assert starts == [0, 1]
    assert len(sse_chunks(payloads)) == len(payloads)


def test_a_cassette_serves_the_bodies_in_order(tmp_path: Path) -> None:
    first, second = anthropic_sse([*text("one"), end()]), anthropic_sse([*text("two"), end()])
    path = write_cassette(tmp_path / "c.jsonl", [first, second], chunk_size=7)
    entries = load_cassette(path)
    assert [e.body for e in entries] == [first, second]
    assert {e.chunk_size for e in entries} == {7}
    line = json.loads(cassette_line("x", provider="gemini", tool_format="hermes"))
    assert line == {"provider": "gemini", "body": "x", "tool_format": "hermes"}

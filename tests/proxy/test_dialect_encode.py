"""The dialects' encoders on their own (OpenAI's and Gemini's): text framed on the fast
path reads back exactly, whatever it holds, and the whole answer holds every piece."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire.events import MessageEnd, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from toolwire.proxy.dialects.gemini_encode import GeminiEncoder
from toolwire.proxy.dialects.openai_chat import ChatEncoder
from toolwire.proxy.dialects.responses_stream import ResponsesEncoder
from toolwire.proxy.relay import Answering

PIECES = ['He said "hi"\n', "\t\\ é 😀 ", "</script>", "\ud83d", "end"]
ANSWERING = Answering("m", 10, json_args=True, scale=None, wire_format="openai-chat")


def _data(stream: bytes) -> list[Any]:
    lines = stream.decode().splitlines()
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def _encoders() -> list[ChatEncoder | ResponsesEncoder | GeminiEncoder]:
    return [
        ChatEncoder(ANSWERING, usage=True),
        ResponsesEncoder({"id": "resp_1", "model": "m"}, frozenset(), ANSWERING),
        GeminiEncoder(ANSWERING),
    ]


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["chat", "responses", "gemini"])
def test_text_reads_back_exactly_from_the_stream_and_the_whole_answer(kind: int) -> None:
    encoder = _encoders()[kind]
    stream = encoder.start() + b"".join(encoder.feed(TextDelta(p)) for p in PIECES)
    stream += encoder.feed(MessageEnd("end_turn"))
    expected = "".join(PIECES).replace("\ud83d", "\ufffd")
    payloads = _data(stream)
    if kind == 0:
        deltas = [p["choices"][0]["delta"].get("content") or "" for p in payloads if p["choices"]]
        whole = encoder.result()["choices"][0]["message"]["content"]
    elif kind == 2:
        parts = [p["candidates"][0]["content"]["parts"][0] for p in payloads]
        deltas = [part["text"] for part in parts]
        whole = encoder.result()["candidates"][0]["content"]["parts"][0]["text"]
    else:
        deltas = [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"]
        whole = encoder.result()["output"][0]["content"][0]["text"]
        numbers = [p["sequence_number"] for p in payloads]
        assert numbers == list(range(len(numbers)))
    assert "".join(deltas) == expected
    assert whole.replace("\ud83d", "\ufffd") == expected


@pytest.mark.parametrize("kind", [0, 1], ids=["chat", "responses"])
def test_streamed_arguments_are_whole_in_the_answer(kind: int) -> None:
    encoder = _encoders()[kind]
    encoder.start()
    pieces = ['{"path": ', '"a.py", ', '"text": "x"}']
    encoder.feed(ToolCallStart("call_1", "Write", 0))
    for piece in pieces:
        encoder.feed(ToolCallDelta("call_1", piece))
    encoder.feed(ToolCallEnd("call_1", json.loads("".join(pieces))))
    encoder.feed(MessageEnd("tool_use"))
    result = encoder.result()
    if kind == 0:
        arguments = result["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    else:
        arguments = result["output"][0]["arguments"]
    assert arguments == "".join(pieces)

"""Provider streams and replay cassettes built from normalized events, for tests.

A test states what the model says as ``toolwire.events`` (``text("hi")``,
``tool_call("toolu_1", "Read", {"file_path": "a.py"})``, ``MessageEnd("tool_use")``) and
gets the Anthropic Messages stream that says it, rendered by the proxy's own
``AnthropicEncoder``: the bytes a real upstream (or ``toolwire proxy``) would send.
``cassette_line`` wraps a body as one line of a replay cassette (``provider``, ``body``,
optional pacing), the format ``toolwire.backends.replay`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolwire.config.choices import ToolFormat, WireFormat
from toolwire.events import (
    Event,
    MessageEnd,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from toolwire.proxy.encode import AnthropicEncoder, Payload, sse_bytes


def text(value: str, *, by_word: bool = False) -> list[Event]:
    """``value`` as one text delta, or one per word (each but the last with its space)."""
    if not by_word:
        return [TextDelta(value)]
    words = value.split(" ")
    return [TextDelta(w if i == len(words) - 1 else w + " ") for i, w in enumerate(words)]


def thinking(value: str, signature: str | None = None) -> list[Event]:
    """A thinking block: its text, then its signature when given."""
    return [ThinkingDelta(value, signature)]


def tool_call(
    call_id: str, name: str, arguments: Any, *, index: int = 0, piece: int | None = None
) -> list[Event]:
    """One tool call: its start, its JSON arguments (whole, or ``piece`` characters per
    delta), its end."""
    raw = json.dumps(arguments)
    size = piece or len(raw) or 1
    deltas = [ToolCallDelta(call_id, raw[i : i + size]) for i in range(0, len(raw), size)]
    return [ToolCallStart(call_id, name, index), *deltas, ToolCallEnd(call_id, arguments)]


def end(stop_reason: StopReason = "end_turn", output_tokens: int = 0) -> MessageEnd:
    """The response's end, with its output token count."""
    return MessageEnd(stop_reason, Usage(output_tokens=output_tokens))


def anthropic_payloads(
    events: Iterable[Event],
    *,
    model: str = "claude-test",
    message_id: str = "msg_test",
    input_tokens: int = 10,
    ping: bool = False,
) -> list[Payload]:
    """The Anthropic stream payloads for ``events`` (end them with a ``MessageEnd``).

    ``message_id`` replaces the encoder's random one so that a stream is the same bytes
    on every run; ``ping`` sends a ``ping`` right after ``message_start``, as the API does.
    """
    encoder = AnthropicEncoder(model, input_tokens=input_tokens)
    start = encoder.start()
    start["message"]["id"] = message_id
    out = [start]
    if ping:
        out.append({"type": "ping"})
    for event in events:
        out += encoder.feed(event)
    return out


def with_blocks(
    payloads: Sequence[Payload], position: int, blocks: Sequence[Payload]
) -> list[Payload]:
    """``payloads`` with whole content ``blocks`` inserted at content index ``position``.

    For blocks no normalized event stands for (``server_tool_use``,
    ``web_search_tool_result``): each is sent whole in its ``content_block_start``; the
    indices of the blocks after them move up.
    """
    inserted: list[Payload] = []
    for offset, block in enumerate(blocks):
        index = position + offset
        inserted.append({"type": "content_block_start", "index": index, "content_block": block})
        inserted.append({"type": "content_block_stop", "index": index})
    out: list[Payload] = []
    for payload in payloads:
        at = payload.get("index")
        starts_later = payload["type"] == "content_block_start" and at == position
        if inserted and (starts_later or payload["type"] == "message_delta"):
            out += inserted
            inserted = []
        if isinstance(at, int) and at >= position:
            payload = {**payload, "index": at + len(blocks)}
        out.append(payload)
    return out + inserted


def sse_chunks(payloads: Iterable[Payload]) -> list[bytes]:
    """Each payload framed as one SSE event (one chunk each, for a fake server to send)."""
    return [sse_bytes(p) for p in payloads]


def anthropic_sse(events: Iterable[Event], **options: Any) -> bytes:
    """The whole Anthropic SSE body for ``events`` (options: see ``anthropic_payloads``)."""
    return b"".join(sse_chunks(anthropic_payloads(events, **options)))


def cassette_line(
    body: bytes | str,
    *,
    provider: WireFormat = "anthropic",
    chunk_size: int | None = None,
    chunk_delay_ms: float | None = None,
    tool_format: ToolFormat | None = None,
) -> str:
    """One replay-cassette line (no newline): ``body`` served as ``provider``'s stream."""
    row: dict[str, Any] = {
        "provider": provider,
        "body": body.decode() if isinstance(body, bytes) else body,
    }
    optional = {
        "chunk_size": chunk_size,
        "chunk_delay_ms": chunk_delay_ms,
        "tool_format": tool_format,
    }
    row.update({key: value for key, value in optional.items() if value is not None})
    return json.dumps(row, ensure_ascii=False)


def write_cassette(path: Path, bodies: Iterable[bytes | str], **options: Any) -> Path:
    """A cassette at ``path``, one response per body (options: see ``cassette_line``)."""
    lines = [cassette_line(body, **options) for body in bodies]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


__all__ = [
    "anthropic_payloads",
    "anthropic_sse",
    "cassette_line",
    "end",
    "sse_chunks",
    "text",
    "thinking",
    "tool_call",
    "with_blocks",
    "write_cassette",
]

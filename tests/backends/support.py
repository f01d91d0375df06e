"""Shared helpers for backend tests: run a stream, build backends against a fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

from tests.fakes.http import sse
from tests.helpers import RECORDED, read_stream
from toolwire.backends.base import HTTPSettings, ModelRequest
from toolwire.events import Event
from toolwire.history import ToolSpec, user

KEY = "sk-test-abcdefghijklmnop0123456789"
FAST = HTTPSettings(
    connect_timeout=2.0, read_timeout=2.0, retry_base_delay=0.01, retry_max_delay=0.05
)
REQUEST = ModelRequest(
    system="be brief",
    messages=(user("what is the weather in Paris?"),),
    tools=(ToolSpec("get_weather", "Weather for a place.", {"type": "object"}),),
    max_tokens=64,
)


def collect(stream: AsyncGenerator[Event, None]) -> list[Event]:
    """Every event of a stream (in a fresh event loop)."""

    async def run() -> list[Event]:
        return [event async for event in stream]

    return asyncio.run(run())


def anthropic_body() -> bytes:
    # The recorded fixture ends without a blank line: add one so message_stop is an event.
    return read_stream(RECORDED / "anthropic_tool_use.sse") + b"\n\n"


def jsonl_as_sse(name: str, named: bool) -> bytes:
    """A fixture of one JSON payload per line as an SSE body (``event:`` names if asked)."""
    lines = read_stream(RECORDED / name).decode().splitlines()
    payloads = [json.loads(line) for line in lines if line.strip()]
    return sse((p.get("type") if named else None, p) for p in payloads)


def find(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]

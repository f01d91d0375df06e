"""The replay backend: serves a recorded cassette instead of calling a provider.

A cassette is a JSON-lines file, one model response per line, served in order, one per
request (docs/design.md, "Replay cassettes")::

    {"provider": "anthropic", "body": "<raw streamed body>", "chunk_size": 64, "chunk_delay_ms": 20}

``provider`` is the wire format of ``body`` (anthropic | openai-chat | openai-responses |
gemini). ``chunk_size`` / ``chunk_delay_ms`` pace the replay so early detection and
cancellation can be watched and tested; without them the body is fed whole. An optional
``tool_format`` (a text format, ``toolwire.decode.textformats``) says the body's text
carries tool calls in that markup; it defaults to the backend's own ``tool_format``. An
optional ``rescue``
(auto | off) says whether the recorded backend rescued calls its server leaked into the
text (docs/decoding.md, "Rescue"); it defaults to the backend's own choice. This is how tests, the
demo and anyone without an API key run the agent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.backends._adapt import adapter_for
from toolwire.backends._names import rewritten, rule_for
from toolwire.backends.base import TOOL_FORMATS, WIRE_FORMATS, ModelRequest, Tap
from toolwire.config.choices import (
    RESCUE_MODES,
    RescueMode,
    ToolFormat,
    WireFormat,
    known_tool_format,
    native_tools,
)
from toolwire.decode import decoder_for
from toolwire.errors import ProtocolError, TransportError
from toolwire.events import Event
from toolwire.samples import DEMO_CASSETTE


def demo_cassette() -> Path:
    """Path of the bundled demo cassette (``toolwire.samples.DEMO_CASSETTE``)."""
    return DEMO_CASSETTE


@dataclass(frozen=True, slots=True)
class CassetteEntry:
    """One recorded response."""

    provider: WireFormat
    body: bytes
    chunk_size: int | None = None
    chunk_delay_ms: float = 0.0
    tool_format: ToolFormat | None = None
    rescue: RescueMode | None = None
    """Whether the recorded backend rescued leaked calls (None: the replay's own choice)."""

    def chunks(self) -> list[bytes]:
        size = self.chunk_size or len(self.body) or 1
        return [self.body[i : i + size] for i in range(0, len(self.body), size)]


def load_cassette(path: str | Path) -> list[CassetteEntry]:
    """Read and check every line of a cassette; errors name the file and the line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise TransportError(f"cannot read the cassette {path}: {e.strerror or e}") from e
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            entries.append(_entry(line, f"{path} line {number}"))
    return entries


def _entry(line: str, where: str) -> CassetteEntry:
    try:
        row: Any = json.loads(line)
    except json.JSONDecodeError as e:
        raise ProtocolError(f"{where}: not JSON ({e.msg})") from e
    if not isinstance(row, dict):
        raise ProtocolError(f"{where}: expected a JSON object")
    provider, body = row.get("provider"), row.get("body")
    if provider not in WIRE_FORMATS:
        raise ProtocolError(f"{where}: provider must be one of {', '.join(WIRE_FORMATS)}")
    if not isinstance(body, str):
        raise ProtocolError(f"{where}: body must be a string (the raw streamed body)")
    size, delay, fmt = row.get("chunk_size"), row.get("chunk_delay_ms", 0), row.get("tool_format")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        raise ProtocolError(f"{where}: chunk_size must be a positive integer")
    if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
        raise ProtocolError(f"{where}: chunk_delay_ms must be a number >= 0")
    if fmt is not None:
        fmt = known_tool_format(fmt)
        if fmt is None:
            raise ProtocolError(f"{where}: tool_format must be one of {', '.join(TOOL_FORMATS)}")
    rescue = row.get("rescue")
    if rescue is not None and rescue not in RESCUE_MODES:
        raise ProtocolError(f"{where}: rescue must be one of {', '.join(RESCUE_MODES)}")
    return CassetteEntry(provider, body.encode("utf-8"), size, float(delay), fmt, rescue)


class ReplayBackend:
    """Serves a cassette's responses in order, one per ``stream`` call.

    ``requests`` keeps every request received, so a test can check what an agent sent.
    The cassette is read on the first request (a bad one fails there, with its line).
    """

    provider = "replay"

    def __init__(
        self,
        *,
        name: str,
        cassette: str | Path,
        tool_format: ToolFormat = "native",
        model: str = "",
        rescue: bool = False,
    ) -> None:
        self.name = name
        self.cassette = Path(cassette)
        self.model = model or self.cassette.name
        self.tool_format = tool_format
        self.rescue = rescue
        """Rescue leaked calls where a cassette line does not say (``decode.rescue``)."""
        self.requests: list[ModelRequest] = []
        self._entries: list[CassetteEntry] | None = None
        self._served = 0

    @property
    def wire_format(self) -> WireFormat:
        """The wire format of the next response (what a recorder of this replay writes)."""
        entries = self._load()
        return entries[self._served].provider if self._served < len(entries) else "anthropic"

    @property
    def served(self) -> int:
        """How many responses were served."""
        return self._served

    def _load(self) -> list[CassetteEntry]:
        if self._entries is None:
            self._entries = load_cassette(self.cassette)
        return self._entries

    async def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        """Yield the next recorded response's events, paced as the cassette asks."""
        entries = self._load()
        if self._served >= len(entries):
            raise TransportError(
                f"the cassette has no more responses ({self._served} served): {self.cassette}"
            )
        entry = entries[self._served]
        self._served += 1
        self.requests.append(request)
        decoder = decoder_for(entry.provider)
        fmt = entry.tool_format or self.tool_format
        native = native_tools(fmt)
        # A recording holds the wire names the provider was offered (``_names``).
        names = rewritten(request.tools, rule_for(entry.provider)) if native else None
        rescue = self.rescue if entry.rescue is None else entry.rescue == "auto"
        source = f"the cassette {self.cassette.name}"
        adapter = adapter_for(fmt, request, names, rescue=rescue, source=source)
        for i, chunk in enumerate(entry.chunks()):
            if i and entry.chunk_delay_ms:
                await asyncio.sleep(entry.chunk_delay_ms / 1000)
            if tap is not None:
                tap(chunk)
            events = decoder.feed(chunk)
            for event in adapter.events(events) if adapter else events:
                yield names.restore(event) if names else event
        events = decoder.close()
        for event in adapter.events(events) if adapter else events:
            yield names.restore(event) if names else event


__all__ = ["DEMO_CASSETTE", "CassetteEntry", "ReplayBackend", "demo_cassette", "load_cassette"]

"""Record a live backend's responses as a replay cassette (``toolwire acp --record PATH``).

``RecordingBackend`` wraps a backend, taps its raw body chunks and appends one cassette
line per response when the response ends (normally, cut, or cancelled: what arrived is
what the replay will serve, so the lines stay one per model request). A request that
failed before any byte arrived writes nothing. Secrets are scrubbed from the body before
it is written: the backend's own key, anything shaped like an API key, and the values of
``Authorization`` / ``x-api-key`` fields.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing
from pathlib import Path

from toolwire.backends.base import BackendWrapper, ModelRequest, Tap, TappableBackend
from toolwire.config.choices import ToolFormat, WireFormat, native_tools
from toolwire.events import Event
from toolwire.secrets import scrub


class RecordingBackend(BackendWrapper):
    """A backend that behaves like ``inner`` and writes each response to ``path``."""

    def __init__(
        self, inner: TappableBackend, path: str | Path, *, secrets: Iterable[str | None] = ()
    ) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self._secrets = [s for s in secrets if s]

    async def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        """Stream from the inner backend, recording the body as it passes."""
        wire_format = self.inner.wire_format  # before the request: a replay moves on after
        tool_format = self.inner.tool_format
        # Only the HTTP backends and the replay rescue (no protocol asks every backend).
        rescue = getattr(self.inner, "rescue", False) is True
        body = bytearray()

        def record(chunk: bytes) -> None:
            body.extend(chunk)
            if tap is not None:
                tap(chunk)

        events = self.inner.stream(request, tap=record)
        try:
            async with aclosing(events):
                async for event in events:
                    yield event
        finally:
            if body:
                self._append(wire_format, tool_format, bytes(body), rescue=rescue)

    def _append(
        self, wire_format: WireFormat, tool_format: ToolFormat, body: bytes, *, rescue: bool
    ) -> None:
        text = scrub(body.decode("utf-8", errors="replace"), self._secrets)
        row: dict[str, str] = {"provider": wire_format, "body": text}
        if not native_tools(tool_format):
            row["tool_format"] = tool_format
        elif rescue:
            row["rescue"] = "auto"  # replayed as it ran: the leaked calls rescued
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


__all__ = ["RecordingBackend"]

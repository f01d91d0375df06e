"""Server-sent events decoder, sans-IO (WHATWG "event stream interpretation").

Feed it body bytes in any chunking; it returns the events completed by each chunk.
Lines end with LF, CRLF or CR (a CR/LF pair split across two chunks is one line end).
Each complete line is decoded as UTF-8 on its own, so a multi-byte character split
across chunks comes out whole. ``data`` lines of one event are joined with ``\\n``.

One departure from the spec, on purpose: at ``close()`` an event that was not
followed by a blank line is still delivered, because real recorded provider streams end
that way; ``truncated`` then tells the caller the stream may have been cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolwire.errors import UsageError

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event. ``event`` defaults to ``"message"`` as the spec says."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Incremental SSE parser: ``feed(bytes) -> events``, ``close() -> events``."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF belongs to it
        self._closed = False
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._pending = False  # a field line was seen since the last dispatch
        self.truncated = False
        """True after ``close()`` when the stream did not end on an event boundary."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._closed:
            raise UsageError("SSEDecoder.feed() called after close()")
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buf = self._buf
        buf += chunk
        # Everything up to the last line end is complete. Line ends are ASCII, so they
        # never fall inside a multi-byte character: decoding the complete part at once
        # gives the same text as decoding each line alone, at a fraction of the cost.
        last = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
        if last < 0:
            return []
        if buf[last] == 0x0D and last == len(buf) - 1:
            self._skip_lf = True  # a CR ending the chunk: an LF starting the next is its pair
        text = buf[: last + 1].decode("utf-8", errors="replace")
        del buf[: last + 1]
        lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
        out: list[SSEEvent] = []
        line_ = self._line
        for line in lines[:-1]:  # the last item is the empty rest after the final line end
            line_(line, out)
        return out

    def close(self) -> list[SSEEvent]:
        """End of body: flush a final unterminated line and event."""
        if self._closed:
            return []
        self._closed = True
        out: list[SSEEvent] = []
        if self._buf:
            self.truncated = True
            self._line(self._buf.decode("utf-8", errors="replace"), out)
            self._buf.clear()
        if self._pending:
            self.truncated = True
            self._dispatch(out)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == ":":
            return
        self._pending = True
        if line[:6] == "data: ":  # the common case, first
            self._data.append(line[6:])
            return
        name, sep, value = line.partition(":")
        if sep and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, out: list[SSEEvent]) -> None:
        self._pending = False
        if self._data:
            out.append(
                SSEEvent(
                    data="\n".join(self._data),
                    event=self._event or "message",
                    id=self._last_id,
                    retry=self._retry,
                )
            )
        self._data = []
        self._event = ""
        self._retry = None


__all__ = ["SSEDecoder", "SSEEvent"]

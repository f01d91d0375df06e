"""Server-sent events decoder, sans-IO (WHATWG "event stream interpretation").

Feed it body bytes in any chunking; it returns the events completed by each chunk.
Lines end with LF, CRLF or CR (a CR/LF pair split across two chunks is one line end).
Each complete line is decoded as UTF-8 on its own, so a multi-byte character split
across chunks comes out whole. ``data`` lines of one event are joined with ``\\n``.

One departure from the spec, on purpose: at ``close()`` an event that was not
followed by a blank line is still delivered, because real recorded provider streams end
that way; ``truncated`` then tells the caller the stream may have been cut.

``boundary`` reports where the complete events end in the byte stream, so a relay can
forward the bytes of whole events as they are without a parse of its own.
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
        self.fed = 0
        """Bytes fed so far."""
        self.boundary = 0
        """Where the last complete event ends: the offset in the stream (bytes fed from
        the start) just past the blank line that ended it, 0 before any. The bytes before
        it are whole events (and comments); those after it belong to an event still
        arriving. A blank line ending in CR moves it past the CR at once, and past an LF
        that then follows it. An event ``close()`` delivers without a blank line does not
        move it."""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._closed:
            raise UsageError("SSEDecoder.feed() called after close()")
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                if self.boundary == self.fed:
                    self.boundary += 1  # the LF of a blank line's CRLF
                self.fed += 1
                chunk = chunk[1:]
        self.fed += len(chunk)
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
        crs = "\r" in text
        if crs:
            end = _last_blank_line_end(buf, last + 1)
        else:  # the common case inline: the per-chunk cost shows with small chunks
            end = buf.rfind(b"\n\n", 0, last + 1) + 2
            if end == 1:  # none: unless a line end comes first (the last one's was fed before)
                end = 1 if buf[0] == 0x0A else 0
        if end:
            self.boundary = self.fed - len(buf) + end
        del buf[: last + 1]
        lines = _LINE_END.split(text) if crs else text.split("\n")
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


def _last_blank_line_end(buf: bytearray, size: int) -> int:
    """Where the last blank line in ``buf[:size]`` ends (0: none). ``buf`` starts a line."""
    # Two line ends in a row end a blank line: LF LF, CR CR or LF CR (CR LF is one line
    # end; CRLF CRLF contains LF CR). The second may be a CRLF, one byte longer.
    at = max(buf.rfind(b"\n\n", 0, size), buf.rfind(b"\r\r", 0, size))
    at = max(at, buf.rfind(b"\n\r", 0, size))
    if at >= 0:
        end = at + 2
        return end + 1 if buf[end - 1] == 0x0D and buf[end : end + 1] == b"\n" else end
    # A line end first: the line before it ended in an earlier chunk, so it ends a blank line.
    if buf[:2] == b"\r\n":
        return 2
    return 1 if buf[0] in (0x0A, 0x0D) else 0


__all__ = ["SSEDecoder", "SSEEvent"]

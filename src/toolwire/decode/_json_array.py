"""Split a streamed JSON array of objects (``[{...},\\n{...}]``) into its objects.

Some endpoints stream one JSON array whose elements arrive over time (Gemini's
``streamGenerateContent`` without ``alt=sse``). Each element is complete once its braces
balance, so this scanner only tracks brace depth and whether it is inside a string; it
never parses values (the decoder does, once per object). Bytes are scanned, not text:
UTF-8 never puts the bytes of ``{``, ``}``, ``"`` or ``\\`` inside a multi-byte
character, so a character split across chunks cannot confuse the scan.

Between objects anything but ``{`` is skipped: the array's ``[``, ``,``, ``]`` and
whitespace. A bare object (an error body sent without the array) comes out the same way.
"""

from __future__ import annotations

import re

_OUTSIDE = re.compile(rb'[{}"]')  # inside an object, outside strings
_INSIDE = re.compile(rb'["\\]')  # inside a string


class JsonObjects:
    """``feed(bytes) -> [object text, ...]``; ``close() -> unfinished text or ""``."""

    def __init__(self) -> None:
        self._buf = bytearray()  # the object being received
        self._depth = 0
        self._in_string = False
        self._escape = False  # the previous chunk ended right after a backslash

    def feed(self, data: bytes) -> list[str]:
        out: list[str] = []
        i, n = 0, len(data)
        start = 0  # where the current object's bytes begin in this chunk
        while i < n:
            if self._depth == 0:
                i = data.find(b"{", i)
                if i < 0:
                    return out  # only separators here
                start = i
                self._depth = 1
                i += 1
            elif self._escape:
                self._escape = False
                i += 1
            elif self._in_string:
                i = self._string(data, i)
            else:
                m = _OUTSIDE.search(data, i)
                if m is None:
                    break
                i = m.end()
                if self._structural(m.group()):
                    self._buf += data[start:i]
                    out.append(self._take())
        if self._depth:
            self._buf += data[start:]
        return out

    def close(self) -> str:
        """What was left of an object the body cut short (``""`` if none)."""
        return self._take() if self._depth else ""

    def _string(self, data: bytes, i: int) -> int:
        m = _INSIDE.search(data, i)
        if m is None:
            return len(data)
        if m.group() == b'"':
            self._in_string = False
        else:
            self._escape = True
        return m.end()

    def _structural(self, byte: bytes) -> bool:
        """Track one brace or quote; True when it closed a top-level object."""
        if byte == b'"':
            self._in_string = True
        elif byte == b"{":
            self._depth += 1
        else:
            self._depth -= 1
        return self._depth == 0

    def _take(self) -> str:
        text = self._buf.decode("utf-8", errors="replace")
        self._buf.clear()
        self._depth = 0
        self._in_string = False
        self._escape = False
        return text

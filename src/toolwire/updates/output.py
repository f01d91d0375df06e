"""Bounded output of a running tool, for ACP's replace-only ``content``.

ACP v1 ``content`` replaces the whole list, so a running command's growing output would
have to be re-sent in full on every frame: that is how codex-acp reached 27-46 GB RSS
(codex-acp#225) and 890 MB of JSON for one 35k-line command (agent-shell#342). Here:

* while running, a frame shows only the last ``tail_bytes`` of output, after a visible
  "[N earlier bytes not shown]" line (frames are throttled by the update engine);
* the result shows at most ``result_bytes``: its head and its tail around a line saying
  how many bytes were cut (the end of a command's output is where errors are).

Memory is bounded too: only the head and a rolling tail are kept, never the whole output.
Sizes are UTF-8 bytes; a cut never splits a character.

This is toolwire's one head+tail cap: the tools cap what goes back to the model with it
too. Bytes, not characters, because the cap exists to bound size: memory, the wire (the
engine counts frames in bytes) and the stored history; a limit of N bytes also never lets
more than N characters through, so the model's share is bounded at least as tightly.
"""

from __future__ import annotations

import codecs
from typing import Final

DEFAULT_TAIL_BYTES: Final = 2048
DEFAULT_RESULT_BYTES: Final = 32768


def _as_bytes(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8", "replace")


def _head_text(data: bytes) -> tuple[str, int]:
    """Decode, leaving out a character cut at the end; also the bytes used."""
    return codecs.utf_8_decode(data, "replace", False)  # noqa: FBT003 (final; positional only)


def _tail_text(data: bytes) -> tuple[str, int]:
    """Decode, skipping continuation bytes of a character cut at the start."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:].decode("utf-8", "replace"), skip


def cut_marker(cut: int, limit: int) -> str:
    """The line that replaces the middle of a capped result."""
    return f"\n[{cut:,} bytes not shown: output capped at {limit:,} bytes]\n"


def cap_text(data: str | bytes, limit: int = DEFAULT_RESULT_BYTES) -> str:
    """``data`` as text of at most about ``limit`` bytes: head, cut line, tail."""
    raw = _as_bytes(data)
    if len(raw) <= limit:
        return raw.decode("utf-8", "replace")
    half = limit // 2
    head, used = _head_text(raw[:half])
    tail, skipped = _tail_text(raw[len(raw) - (limit - half) :])
    cut = len(raw) - used - (limit - half) + skipped
    return head + cut_marker(cut, limit) + tail


class OutputWindow:
    """A tool's output so far, kept as a head and a rolling tail (bounded memory)."""

    __slots__ = ("_head", "_head_cap", "_keep", "_tail", "result_bytes", "tail_bytes", "total")

    def __init__(
        self, tail_bytes: int = DEFAULT_TAIL_BYTES, result_bytes: int = DEFAULT_RESULT_BYTES
    ) -> None:
        if tail_bytes < 1 or result_bytes < 2:
            raise ValueError("tail_bytes must be >= 1 and result_bytes >= 2")
        self.tail_bytes = tail_bytes
        self.result_bytes = result_bytes
        self._head_cap = result_bytes // 2
        self._keep = max(tail_bytes, result_bytes - self._head_cap)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def append(self, data: str | bytes) -> None:
        """Add a piece of output."""
        raw = _as_bytes(data)
        self.total += len(raw)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += raw[:room]
        self._tail += raw
        excess = len(self._tail) - self._keep
        if excess > 0:
            del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        """True when ``result_text`` leaves part of the output out."""
        return self.total > self.result_bytes

    def running_text(self) -> str:
        """The last ``tail_bytes``, after a line counting the earlier bytes not shown."""
        shown = min(self.tail_bytes, len(self._tail))
        text, skipped = _tail_text(bytes(self._tail[len(self._tail) - shown :]))
        hidden = self.total - shown + skipped
        if hidden <= 0:
            return text
        return f"[{hidden:,} earlier bytes not shown]\n" + text

    def result_text(self) -> str:
        """All output if it fits ``result_bytes``, else its head and tail around a cut line."""
        if self.total <= self.result_bytes:
            if self.total <= len(self._tail):
                return bytes(self._tail).decode("utf-8", "replace")
            # The head is full and the tail holds everything after it (keep >= the rest).
            after_head = self.total - len(self._head)
            whole = bytes(self._head) + bytes(self._tail[len(self._tail) - after_head :])
            return whole.decode("utf-8", "replace")
        want = self.result_bytes - self._head_cap
        head, used = _head_text(bytes(self._head))
        tail, skipped = _tail_text(bytes(self._tail[len(self._tail) - want :]))
        cut = self.total - used - want + skipped
        return head + cut_marker(cut, self.result_bytes) + tail


__all__ = [
    "DEFAULT_RESULT_BYTES",
    "DEFAULT_TAIL_BYTES",
    "OutputWindow",
    "cap_text",
    "cut_marker",
]

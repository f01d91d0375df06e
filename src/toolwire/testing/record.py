"""A JSON-lines recorder of ACP traffic, with secrets redacted.

One line per message, in and out: ``{"t": seconds, "dir": "in"|"out", "msg": {...}}``.
Each line is built whole in memory and handed to the file in one ``write`` followed by a
``flush``, so a crash leaves complete lines, never half of one (``read_recording`` also
skips a cut last line, should the OS have written only part of it).

API keys and ``Authorization`` values never reach the file: ``redact`` replaces the
values of keys named like credentials (``api_key``, ``authorization``, ``x-api-key``,
``token``...) and, inside any string, ``sk-...`` keys and ``Bearer``/header values (a
``curl -H "Authorization: ..."`` in a Bash command is a string, not a key).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal

from toolwire.updates.wire import Notification

Direction = Literal["in", "out"]
REDACTED: Final = "[REDACTED]"

_SECRET_KEYS: Final = frozenset(
    {"apikey", "xapikey", "authorization", "proxyauthorization", "token", "secret", "password"}
)
_SECRET_SUFFIXES: Final = ("apikey", "token", "secret", "password")
_IN_TEXT: Final = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"(?i)((?:authorization|x-api-key|api[-_]?key)\s*[:=]\s*)\"?[^\s\"',;]+"),
)
_SUSPECT: Final = re.compile(rb"(?i)sk-|bearer|authoriz|api[-_]?key|token|secret|password")


def is_secret_key(key: str) -> bool:
    """True for a credential-like key name (case, ``-`` and ``_`` ignored)."""
    norm = key.lower().replace("-", "").replace("_", "")
    return norm in _SECRET_KEYS or norm.endswith(_SECRET_SUFFIXES)


def redact_text(text: str) -> str:
    """``text`` with API keys and authorization values replaced by ``[REDACTED]``."""
    for pattern in _IN_TEXT:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


def redact(value: Any) -> Any:
    """A copy of a JSON value with every secret replaced (the input is not changed)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) and v else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


class TrafficRecorder:
    """Appends ACP messages to a JSON-lines file, one complete object per line."""

    def __init__(self, sink: BinaryIO, clock: Callable[[], float] = time.time) -> None:
        self._sink = sink
        self._clock = clock

    @classmethod
    def open(cls, path: str | Path) -> TrafficRecorder:
        """A recorder appending to ``path`` (unbuffered: each line is one write)."""
        return cls(Path(path).open("ab", buffering=0))

    def record(self, direction: Direction, message: Mapping[str, Any] | Notification) -> None:
        """Write one message. Outgoing notifications re-use their encoded line."""
        head = b'{"t":' + repr(round(self._clock(), 6)).encode() + b',"dir":"' + direction.encode()
        if isinstance(message, Notification) and not _SUSPECT.search(message.line):
            body = message.line.rstrip(b"\n")  # nothing secret-looking: no re-encoding
        else:
            raw = message.message if isinstance(message, Notification) else message
            body = json.dumps(redact(raw), separators=(",", ":")).encode("ascii")
        self._write(head + b'","msg":' + body + b"}\n")

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        while view:
            written = self._sink.write(view)
            view = view[written or len(view) :]
        self._sink.flush()

    def close(self) -> None:
        """Close the file."""
        self._sink.close()


def read_recording(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a recording; a cut last line (a crash mid-write) is skipped."""
    with Path(path).open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return
            record: dict[str, Any] = json.loads(raw)
            yield record


__all__ = [
    "REDACTED",
    "TrafficRecorder",
    "is_secret_key",
    "read_recording",
    "redact",
    "redact_text",
]

"""Decoders: one module per wire format, each a pure state machine over body bytes."""

from __future__ import annotations

from typing import Protocol

from toolwire.events import Event


class Decoder(Protocol):
    """What every decoder is: ``feed(bytes) -> events`` and ``close() -> events``."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


__all__ = ["Decoder"]

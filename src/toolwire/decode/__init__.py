"""Decoders: one module per wire format, each a pure state machine over body bytes.

``decoder_for(name)`` builds a fresh decoder for any supported format. The text formats
 (tool calls embedded in the model's text) are fed the text itself; here they
are wrapped so that they too take bytes and end with one ``MessageEnd``, and given the
declared tools when the caller knows them (``tools``).
"""

from __future__ import annotations

import codecs
import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol, TypeAlias, cast

from toolwire.decode.textformats import TEXT_FORMATS, TextDecoder, canonical, text_decoder
from toolwire.errors import UsageError
from toolwire.events import Event, MessageEnd, ToolCallStart
from toolwire.providers import PROFILES, WIRE_FORMATS, profile

Format: TypeAlias = str
"""A wire format (``toolwire.providers``) or a text format (``decode.textformats``)."""
FORMATS: tuple[str, ...] = (*WIRE_FORMATS, *TEXT_FORMATS)


class Decoder(Protocol):
    """What every decoder is: ``feed(bytes) -> events`` and ``close() -> events``."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


class TextStream:
    """Bytes of model text -> a text-format decoder, ending with one ``MessageEnd``.

    UTF-8 is decoded incrementally, so a character split across chunks comes out whole.
    """

    def __init__(self, inner: TextDecoder) -> None:
        self._inner = inner
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._calls = 0
        self._closed = False

    def feed(self, data: bytes) -> list[Event]:
        if self._closed:
            raise UsageError("decoder.feed() called after close()")
        return self._count(self._inner.feed(self._utf8.decode(data)))

    def close(self) -> list[Event]:
        if self._closed:
            return []
        self._closed = True
        events = self._count(self._inner.feed(self._utf8.decode(b"", final=True)))
        events += self._count(self._inner.close())
        events.append(MessageEnd("tool_use" if self._calls else "end_turn"))
        return events

    def _count(self, events: list[Event]) -> list[Event]:
        self._calls += sum(isinstance(ev, ToolCallStart) for ev in events)
        return events


def decoder_for(name: str, tools: Mapping[str, dict[str, Any]] | None = None) -> Decoder:
    """A new decoder for the wire or text format ``name`` (one of ``FORMATS``; a text
    format also by any of its aliases, ``decode.textformats``).

    ``tools`` maps each declared tool's name to its parameters' JSON schema: the text
    decoders read more of what models write with it, and type values by it
    (docs/decoding.md).
    """
    known = profile(name)
    if known is not None:
        # A wire format's decoder, imported on first use: a CLI run that decodes one
        # format does not pay for the others.
        return cast(Decoder, _imported(known.decoder)())
    if canonical(name) is None:
        formats = ", ".join((*PROFILES, *TEXT_FORMATS))
        raise UsageError(f"unknown format {name!r}; use one of: {formats}")
    return TextStream(text_decoder(name, tools))


@cache
def _imported(path: str) -> Any:
    """``module:name``, imported once (a proxy makes a decoder per request)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def sniff_format(head: bytes) -> str | None:
    """Guess a JSON provider's wire format from the first bytes of a body, or None."""
    text = head[:4096].decode("utf-8", errors="replace")
    if '"message_start"' in text or '"content_block_' in text:
        return "anthropic"
    if '"chat.completion.chunk"' in text or '"choices"' in text:
        return "openai-chat"
    if '"response.' in text:
        return "openai-responses"
    if '"candidates"' in text:
        return "gemini"
    return None


__all__ = [
    "FORMATS",
    "TEXT_FORMATS",
    "Decoder",
    "Format",
    "TextDecoder",
    "TextStream",
    "decoder_for",
    "sniff_format",
]

"""Decoders: one module per wire format, each a pure state machine over body bytes.

``decoder_for(name)`` builds a fresh decoder for any supported format. The three text
formats (tool calls embedded in the model's text) are fed the text itself; here they
are wrapped so that they too take bytes and end with one ``MessageEnd``, and given the
declared tools when the caller knows them (``tools``).
"""

from __future__ import annotations

import codecs
import importlib
from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypeAlias, cast, get_args

from toolwire.errors import UsageError
from toolwire.events import Event, MessageEnd, ToolCallStart
from toolwire.providers import PROFILES, WireFormat, profile

Format: TypeAlias = Literal[WireFormat, "xml-tags", "hermes", "qwen3-coder"]
FORMATS: tuple[str, ...] = get_args(Format)
TEXT_FORMATS: tuple[str, ...] = ("xml-tags", "hermes", "qwen3-coder")


class Decoder(Protocol):
    """What every decoder is: ``feed(bytes) -> events`` and ``close() -> events``."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


class TextDecoder(Protocol):
    """A decoder of tool calls embedded in text: fed ``str``, emits no ``MessageEnd``."""

    def feed(self, text: str) -> list[Event]: ...

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


# Each text format's module and class, and each wire format's from its profile
# (``toolwire.providers``), imported on first use: a CLI run that decodes one format does
# not pay for the others.
_TEXT_CLASSES: dict[str, str] = {
    "xml-tags": "toolwire.decode.tags:XmlTagsDecoder",
    "hermes": "toolwire.decode.tags:HermesDecoder",
    "qwen3-coder": "toolwire.decode.tags:Qwen3CoderDecoder",
}


def _class_path(name: str) -> str:
    known = profile(name)
    if known is not None:
        return known.decoder
    if name in _TEXT_CLASSES:
        return _TEXT_CLASSES[name]
    formats = ", ".join((*PROFILES, *TEXT_FORMATS))
    raise UsageError(f"unknown format {name!r}; use one of: {formats}")


def decoder_for(name: str, tools: Mapping[str, dict[str, Any]] | None = None) -> Decoder:
    """A new decoder for the wire format ``name`` (one of ``FORMATS``).

    ``tools`` maps each declared tool's name to its parameters' JSON schema: the Hermes and
    Qwen3-Coder decoders read more of what models write with it (docs/decoding.md).
    """
    module, _, cls = _class_path(name).partition(":")
    factory = getattr(importlib.import_module(module), cls)
    if name in ("hermes", "qwen3-coder"):
        return TextStream(factory(tools))
    decoder = factory()
    if name in TEXT_FORMATS:
        return TextStream(decoder)
    return cast(Decoder, decoder)


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

"""Estimating a request's tokens before it is sent.

No tokenizer is bundled (each provider has its own, and most are not public), so the
estimate counts UTF-8 bytes: ``BYTES_PER_TOKEN`` is on the low side for English and
code (real tokenizers give 3.5 to 4.5 bytes per token), so a first estimate runs high,
which is the safe side: compacting a little early costs less than a failed request. The
meter (``meter.ContextMeter``) then scales the estimate by what the provider actually
counted for the previous request, so the error shrinks after the first response.

Counting is linear in the history and allocates nothing per message but the encoded
text: a 1 MB history estimates in about a millisecond.

``estimate_wire`` counts a request body as serialized for the provider instead (the
proxy's scale, below): the same rules for images, another ratio for text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

BYTES_PER_TOKEN: Final = 3.0
MESSAGE_OVERHEAD: Final = 4
"""Tokens a message costs beyond its text (role, separators), by the providers' accounts."""
PART_OVERHEAD: Final = 3
IMAGE_TOKENS: Final = 1600
"""An image, whatever its base64 length: providers bill images by their pixels (about
1,600 tokens for a large one), and a backend without vision gets a one-line note."""


def _bytes(text: str) -> int:
    # len() is exact for ASCII, the common case; only other text is encoded to count.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def tokens_of_bytes(n: int) -> int:
    return -(-n * 10 // int(BYTES_PER_TOKEN * 10))


def estimate_text(text: str) -> int:
    """Tokens of ``text``."""
    return tokens_of_bytes(_bytes(text))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def message_bytes(message: Message) -> int:
    """The bytes of a message's content: texts, thinking, call arguments, results (not
    images: ``image_count``)."""
    total = 0
    for part in message.parts:
        if isinstance(part, TextPart):
            total += _bytes(part.text)
        elif isinstance(part, ThinkingPart):
            total += _bytes(part.text) + len(part.signature or "") + len(part.redacted or "")
        elif isinstance(part, ToolCallPart):
            total += _bytes(part.name) + _bytes(_json(part.arguments)) + len(part.id)
        elif isinstance(part, ToolResultPart):
            total += _bytes(part.content) + len(part.call_id)
    return total


def image_count(message: Message) -> int:
    """The images a message carries (the user's, and tool results')."""
    return sum(
        1 if isinstance(p, ImagePart) else len(p.images) if isinstance(p, ToolResultPart) else 0
        for p in message.parts
    )


def estimate_message(message: Message) -> int:
    return (
        tokens_of_bytes(message_bytes(message))
        + IMAGE_TOKENS * image_count(message)
        + MESSAGE_OVERHEAD
        + PART_OVERHEAD * len(message.parts)
    )


def estimate_messages(messages: Iterable[Message]) -> int:
    """Tokens of ``messages`` as a request carries them."""
    return sum(estimate_message(m) for m in messages)


def estimate_tools(tools: Sequence[ToolSpec]) -> int:
    """Tokens of the tool definitions (name, description, schema)."""
    return sum(
        estimate_text(t.name) + estimate_text(t.description) + estimate_text(_json(t.input_schema))
        for t in tools
    )


CHARS_PER_WIRE_TOKEN: Final = 4
"""Characters of a serialized body per token (``estimate_wire``)."""
_IMAGE_DATA = ('"data":"', ";base64,")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*=*")
_IMAGE_PAYLOAD = 1024
"""Base64 runs shorter than this count as text (an icon costs what its characters do)."""


def estimate_wire(text: str) -> int:
    """Tokens of a request body as the provider gets it (compact JSON text).

    The proxy counts this and not the history: a pass-through sends the client's own
    blocks (documents, server tool results, cache marks), which the history keeps as
    placeholders at most. The ratio is the likely one (real tokenizers give 3.5 to 4.5
    characters per token), not ``BYTES_PER_TOKEN``'s safe side: the agent's estimate is
    corrected by each response's usage (``meter``), the proxy's is not, and Claude Code
    compacts on it (``count_tokens``), so a high one would compact sessions at two
    thirds full. On a history of code the two differ by about a fifth (25k against 32k
    tokens for 95 KB of Python); JSON syntax counts here, per-part overheads there.

    Images count ``IMAGE_TOKENS`` each, as in the history estimate: a provider bills the
    pixels, not the base64 (a 300 KB screenshot is not 100k tokens). An image payload is
    a base64 run of at least ``_IMAGE_PAYLOAD`` characters in an Anthropic or Gemini
    ``"data"`` field or an OpenAI ``data:`` URL, with ``image/`` just before it.
    """
    chars, images = len(text), 0
    for marker in _IMAGE_DATA:
        at = text.find(marker)
        while at >= 0:
            start = at + len(marker)
            run = _BASE64.match(text, start)
            end = start if run is None else run.end()
            if end - start >= _IMAGE_PAYLOAD and "image/" in text[max(0, at - 80) : at]:
                chars -= end - start
                images += 1
            at = text.find(marker, end)
    return max(1, -(-chars // CHARS_PER_WIRE_TOKEN) + IMAGE_TOKENS * images)


def estimate_request(
    system: str, messages: Iterable[Message], tools: Sequence[ToolSpec] = ()
) -> int:
    """Tokens of a whole request: system prompt, tools and messages."""
    return estimate_text(system) + estimate_tools(tools) + estimate_messages(messages)


__all__ = [
    "BYTES_PER_TOKEN",
    "CHARS_PER_WIRE_TOKEN",
    "IMAGE_TOKENS",
    "estimate_message",
    "estimate_messages",
    "estimate_request",
    "estimate_text",
    "estimate_tools",
    "estimate_wire",
    "image_count",
    "message_bytes",
    "tokens_of_bytes",
]

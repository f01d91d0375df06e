"""Reading a provider's refusal of one content block, and finding that block again.

A request refused because of one image (bytes that are not base64, a type that does not
match them, too large, too many pixels, "could not process") is refused again on every
later request that carries the image: the history holds it, so one bad block would wedge
the session. ``block_refusal`` recognises such an answer and reads the path to the block
when the provider gives one:

* Anthropic names it in the message: ``messages.3.content.1.image.source.base64: invalid
  base64 data``, inside a tool result ``messages.5.content.0.tool_result.content.1.image
  ...`` (also without ``tool_result``);
* OpenAI in the error's ``param`` (``messages[2].content[1].image_url``; Responses
  ``input[4].content[0]...``), sometimes in the message, often not at all;
* Gemini in ``details[].fieldViolations[].field`` or the message
  (``contents[0].parts[2].inline_data.data``).

The path counts the messages of the body that was sent (a system message first,
same-role messages merged, a tool result's images in a user message of their own), not
the history's, so ``refused_images`` walks the body itself and returns the images found in
the block, by their bytes; ``noted`` then replaces those images in the history by their
one-line notes. Without a path, or when it leads to no image, every image of the history
is one the refusal could be about (``refused_images`` returns None).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from toolwire.history import ImagePart, Message, Part, TextPart, ToolResultPart
from toolwire.history.images import with_notes

STATUSES: Final = frozenset({400, 413, 422})
CODES: Final = frozenset(
    {
        "invalid_image",
        "image_parse_error",
        "invalid_image_format",
        "invalid_image_url",
        "request_too_large",  # Anthropic's 413: images are what grows a body past 32 MB
    }
)
PHRASES: Final = re.compile(
    "|".join(
        (
            r"invalid base64",  # Anthropic
            r"base64 decoding failed",  # Gemini
            r"does not match the provided media type",  # Anthropic
            r"image exceeds",  # Anthropic: "image exceeds 5 MB maximum"
            r"image (?:cannot|can't|must not) be empty",  # Anthropic
            r"could not process image",  # Anthropic
            r"image dimensions exceed",  # Anthropic: "... max allowed size: 8000 pixels"
            r"unable to process input image",  # Gemini
            r"provided image is not valid",  # Gemini
            r"invalid image",  # OpenAI
            r"unsupported image",  # OpenAI: "You uploaded an unsupported image"
            r"image_url is only supported",  # OpenAI, vLLM: a model without vision
            r"input should be 'image/",  # Anthropic: a media_type it does not take
            r"unsupported (?:mime|media) ?type",
            # The whole request over the provider's size (Anthropic 32 MB, Gemini 20 MB):
            # a history is sent whole every turn, so the screenshots it piled up refuse
            # every later request; no block is named, so every image is blamed.
            r"request exceeds the maximum size",  # Anthropic
            r"payload size exceeds the limit",  # Gemini
        )
    ),
    re.IGNORECASE,
)
# A path into the body: where Anthropic, OpenAI and Gemini name the refused block.
_PATH: Final = re.compile(
    r"\b(?:messages|contents|input)(?:\.?\[\d+\]|\.\d+|\.[A-Za-z_]\w*)*", re.IGNORECASE
)
_TOKEN: Final = re.compile(r"[A-Za-z_]\w*|\d+")
_MAX_REASON = 120


@dataclass(frozen=True, slots=True)
class BlockRefusal:
    """A provider's "this block cannot be taken": why, and where in the body sent."""

    reason: str
    """The provider's words without the path: ``invalid base64 data``."""
    path: tuple[str | int, ...] | None
    """The wire path to the block (``("messages", 3, "content", 1)``), when it is given."""


def block_refusal(
    status: int, message: str, code: str | None = None, param: str | None = None
) -> BlockRefusal | None:
    """The refusal of one image in an error answer, or None when it is about else."""
    if status not in STATUSES:
        return None
    if not (code in CODES or PHRASES.search(message)):
        return None
    path = None
    for where in (param, message):
        found = _PATH.search(where or "")
        if found is not None and any(t.isdigit() for t in _TOKEN.findall(found.group())):
            path = _block_path(found.group())
            break
    return BlockRefusal(_reason(message, code), path)


def refused_images(body: Mapping[str, Any], refusal: BlockRefusal) -> frozenset[str] | None:
    """The image sources (base64 data, data URLs, URLs) in the refused block of ``body``;
    None when the path is missing, leads nowhere, or to a block without an image."""
    if refusal.path is None:
        return None
    node: Any = body
    for token in refusal.path:
        if isinstance(token, int):
            if not (isinstance(node, list) and 0 <= token < len(node)):
                return None  # an index where there is none: not this body's path
            node = node[token]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        # A name that is no key is the block's type (Anthropic's ``tool_result``): skipped.
    found = frozenset(_strings(node))
    return found or None


def noted(
    messages: Iterable[Message], sources: frozenset[str] | None, reason: str
) -> tuple[list[Message], int]:
    """``messages`` with each refused image (every image when ``sources`` is None) as its
    one-line note saying why; how many were replaced."""
    why = f"not sent: the model refused it ({reason})"
    count = 0

    def refused(image: ImagePart) -> bool:
        nonlocal count
        hit = sources is None or bool(_sources_of(image) & sources)
        count += hit
        return hit

    out = [
        Message(m.role, tuple(_part(p, refused, why) for p in m.parts), m.backend) for m in messages
    ]
    return out, count


def _part(part: Part, refused: Callable[[ImagePart], bool], why: str) -> Part:
    if isinstance(part, ImagePart) and refused(part):
        return TextPart(part.note(why))
    if isinstance(part, ToolResultPart) and part.images:
        gone = [i for i in part.images if refused(i)]
        if gone:
            kept = tuple(i for i in part.images if i not in gone)
            return dataclasses.replace(
                part, content=with_notes(part.content, gone, why), images=kept
            )
    return part


def _sources_of(image: ImagePart) -> set[str]:
    """The strings a wire carries an image as: its URL, or its data and data URL."""
    if image.url is not None:
        return {image.url}
    return {image.data, f"data:{image.media_type};base64,{image.data}"}


def _strings(node: Any) -> Iterator[str]:
    """The image sources inside a wire block: every string under a key that holds one."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and key in ("data", "url", "image_url", "fileUri"):
                yield value
            else:
                yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _block_path(text: str) -> tuple[str | int, ...]:
    """The path up to its last index: the block itself, not a field inside it."""
    tokens: list[str | int] = [int(t) if t.isdigit() else t for t in _TOKEN.findall(text)]
    last = max(i for i, t in enumerate(tokens) if isinstance(t, int))
    return tuple(tokens[: last + 1])


def _reason(message: str, code: str | None) -> str:
    """The provider's words without a leading path: ``invalid base64 data``."""
    found = _PATH.match(message.strip())
    text = message.strip()[found.end() :] if found else message.strip()
    text = text.lstrip(" :").rstrip(" .") or (code or "refused")
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


__all__ = ["CODES", "PHRASES", "BlockRefusal", "block_refusal", "noted", "refused_images"]

"""A fetched body as text for the model: its charset found, HTML turned into Markdown.

The charset comes from the ``Content-Type`` header, else a byte-order mark, else the
document's ``<meta charset>`` (or ``http-equiv``), else UTF-8; bytes that do not decode
are replaced, never fatal. HTML becomes Markdown with ``markdownify`` after the parts
that are not the page's text (scripts, styles, navigation, forms) are dropped. Other
text, JSON and XML stay as they are; anything else is refused, naming its type.
"""

from __future__ import annotations

import codecs
import re
import threading
from email.message import Message
from typing import Final

from toolwire.web.errors import FetchError
from toolwire.web.markup import NOISE, to_markdown

_TEXT_APPLICATION: Final = frozenset(
    {"json", "xml", "javascript", "ecmascript", "x-javascript", "x-ndjson", "x-yaml", "yaml"}
)
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def media_type(content_type: str | None) -> tuple[str, str | None]:
    """``(type/subtype, charset or None)`` of a ``Content-Type`` header."""
    if not content_type:
        return "", None
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return message.get_content_type().lower(), charset if isinstance(charset, str) else None


def is_text(kind: str) -> bool:
    """Whether a media type is text the model can read."""
    major, _, minor = kind.partition("/")
    if major == "text":
        return True
    return major == "application" and (
        minor in _TEXT_APPLICATION or minor.endswith(("+json", "+xml"))
    )


def charset_of(body: bytes | bytearray, declared: str | None, *, html: bool) -> str:
    """The encoding to read ``body`` with (module doc); always one Python knows."""
    for candidate in (declared, _bom(body), _meta(body) if html else None):
        if candidate and _known(candidate):
            return candidate
    return "utf-8"


def _bom(body: bytes | bytearray) -> str | None:
    return next((name for bom, name in _BOMS if body.startswith(bom)), None)


def _meta(body: bytes | bytearray) -> str | None:
    found = _META.search(body[:4096])  # the HTML standard's prescan reads 1024 bytes
    return found.group(1).decode("ascii") if found else None


def _known(name: str) -> bool:
    """A text encoding Python has: not ``rot13`` or ``base64``, which are codecs too
    but turn bytes into bytes (decoding with one raises)."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        return False
    return bool(getattr(info, "_is_text_encoding", True))


def page_text(
    chunks: list[bytes], content_type: str | None, stop: threading.Event | None = None
) -> tuple[tuple[str, ...], str]:
    """``(text parts, media type)``: Markdown for HTML, the text itself for other text; a
    ``FetchError`` for a binary type; ``markup.Halted`` once ``stop`` is set. ``chunks``
    (the body as it arrived) is emptied as it is decoded, so the body and its text are
    never both held whole."""
    parts, kind = decoded(chunks, content_type)
    if is_html(kind):  # the parser needs the document whole (and dwarfs it anyway)
        return (to_markdown("".join(parts), stop),), kind
    return parts, kind


def decoded(chunks: list[bytes], content_type: str | None) -> tuple[tuple[str, ...], str]:
    """``(text parts, media type)`` of the body, HTML still HTML; ``chunks`` is emptied
    chunk by chunk as it is decoded (``page_text``)."""
    start = b""  # what the charset is read from: the first 4 KB
    for chunk in chunks:
        start += chunk[: 4096 - len(start)]
        if len(start) >= 4096:
            break
    kind, declared = media_type(content_type)
    if not kind:
        kind = "application/octet-stream" if b"\x00" in start[:1024] else _sniff(start)
    refuse_binary(kind)
    charset = charset_of(start, declared, html=is_html(kind))
    decoder = codecs.getincrementaldecoder(charset)("replace")
    chunks.reverse()  # popped from the end: the first chunk first, each freed once decoded
    parts = [decoder.decode(chunks.pop()) for _ in range(len(chunks))]
    parts.append(decoder.decode(b"", final=True))
    return tuple(part for part in parts if part), kind


def is_html(kind: str) -> bool:
    """Whether a media type is HTML (made Markdown)."""
    return kind in ("text/html", "application/xhtml+xml")


def refuse_binary(content_type: str | None) -> None:
    """``FetchError`` for a declared type that is not text (none declared: not yet)."""
    kind = media_type(content_type)[0]
    if kind and not is_html(kind) and not is_text(kind):
        raise FetchError(
            f"The page is {kind}, not text: WebFetch reads HTML, text, JSON and XML only."
        )


def _sniff(body: bytes | bytearray) -> str:
    start = body[:512].lstrip().lower()
    return "text/html" if start.startswith((b"<!doctype html", b"<html")) else "text/plain"


__all__ = [
    "NOISE",
    "charset_of",
    "decoded",
    "is_html",
    "is_text",
    "media_type",
    "page_text",
    "refuse_binary",
    "to_markdown",
]

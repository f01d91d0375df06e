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
from email.message import Message
from typing import Final

from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from toolwire.web.errors import FetchError

#: Elements that are never the page's text.
NOISE: Final = ("script", "style", "noscript", "template", "nav", "iframe", "svg", "form")
_TEXT_APPLICATION: Final = frozenset(
    {"json", "xml", "javascript", "ecmascript", "x-javascript", "x-ndjson", "x-yaml", "yaml"}
)
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n{3,}")


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
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def page_text(body: bytes | bytearray, content_type: str | None) -> tuple[str, str]:
    """``(text, media type)``: Markdown for HTML, the text itself for other text; a
    ``FetchError`` for a binary type."""
    kind, declared = media_type(content_type)
    if not kind:
        kind = "application/octet-stream" if b"\x00" in body[:1024] else _sniff(body)
    refuse_binary(kind)
    html = kind in ("text/html", "application/xhtml+xml")
    text = body.decode(charset_of(body, declared, html=html), "replace")
    return (to_markdown(text) if html else text), kind


def refuse_binary(content_type: str | None) -> None:
    """``FetchError`` for a declared type that is not text (none declared: not yet)."""
    kind = media_type(content_type)[0]
    if kind and kind not in ("text/html", "application/xhtml+xml") and not is_text(kind):
        raise FetchError(
            f"The page is {kind}, not text: WebFetch reads HTML, text, JSON and XML only."
        )


def _sniff(body: bytes | bytearray) -> str:
    start = body[:512].lstrip().lower()
    return "text/html" if start.startswith((b"<!doctype html", b"<html")) else "text/plain"


def to_markdown(html: str) -> str:
    """HTML as Markdown, without its noise (``NOISE``) and runs of blank lines."""
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all(NOISE):
        element.decompose()
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return _BLANK_LINES.sub("\n\n", markdown).strip() + "\n"


__all__ = [
    "NOISE",
    "charset_of",
    "is_text",
    "media_type",
    "page_text",
    "refuse_binary",
    "to_markdown",
]

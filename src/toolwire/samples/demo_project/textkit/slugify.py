"""Turn titles into URL slugs: "Hello, World!" -> "hello-world"."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[a-z0-9]+")


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """A lowercase ASCII slug of ``text``: its words joined by ``separator``.

    Accents are dropped ("Crème brûlée" -> "creme-brulee"), anything that is not a
    letter or a digit separates words, and ``max_length`` cuts at a word boundary.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = _WORD.findall(ascii_text)
    slug = separator.join(words)
    if max_length is not None and len(slug) > max_length:
        head = slug[: max_length + 1]
        slug = head.rsplit(separator, 1)[0] if separator and separator in head else head[:-1]
    return slug

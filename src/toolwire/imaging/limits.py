"""What each provider takes in one image, and the envelope every image is fitted to.

The numbers are the providers' documented limits, kept in their profiles
(``toolwire.providers``; docs/agent.md, "Images", cites the pages). toolwire fits an
image once, where it enters a session, to the strictest of them all: the stored history
is then valid for any backend the session switches to, and no request builder has to
refit it.
"""

from __future__ import annotations

from typing import Final, TypeAlias

from toolwire.providers import PROFILES, ImageLimits

_MB: Final = 1024 * 1024


Limits: TypeAlias = ImageLimits
"""One provider's limits for an inline (base64) image (its profile's ``images``)."""

PROVIDERS: Final = tuple({p.images.service: p.images for p in PROFILES.values()}.values())
"""Anthropic, OpenAI (Chat and Responses) and Gemini: each service's limits, once."""

FORMATS: Final = frozenset.intersection(*(p.formats for p in PROVIDERS))
"""What every provider takes (PNG, JPEG, WebP); GIF is sent as PNG."""

LONG_EDGE: Final = 1568
"""The longest side a fitted image keeps: Anthropic scales anything larger down to it
before the model sees it, OpenAI to 768 px on the short side, Gemini to 768 px tiles; so
more pixels cost bytes (in every request of the session) and buy nothing."""

MAX_BASE64: Final = min(p.max_base64 for p in PROVIDERS if p.max_base64 is not None)
"""Anthropic's 5 MB per image, counted in base64 characters as its API counts them."""

MAX_PIXELS: Final = 8000 * 8000
"""The largest image decoded at all (64 megapixels, 256 MB as RGBA): Anthropic's
largest accepted size; anything larger is refused before its pixels are decoded (a
"decompression bomb" is a few KB that would decode to gigabytes)."""

SHOWN_BASE64: Final = 2 * _MB
"""The largest image the editor is shown in a tool call card (one ``session/update``
line); a fitted screenshot is a few hundred KB, so this rarely bites; above it the card
shows the image's note."""

__all__ = [
    "FORMATS",
    "LONG_EDGE",
    "MAX_BASE64",
    "MAX_PIXELS",
    "PROVIDERS",
    "SHOWN_BASE64",
    "Limits",
]

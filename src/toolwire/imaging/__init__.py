"""Images checked and fitted with Pillow: what every provider takes, or a note naming it.

``fitted`` is applied where an image enters a session (a prompt's image, ``Read`` of an
image file, an MCP tool's image, a history restored from the store), so the history holds
only images every backend accepts (``limits``: the providers' documented limits and the
envelope of them all).
"""

from __future__ import annotations

from toolwire.imaging.fit import NOT_AN_IMAGE, fitted, fitted_messages
from toolwire.imaging.limits import (
    FORMATS,
    LONG_EDGE,
    MAX_BASE64,
    MAX_PIXELS,
    PROVIDERS,
    SHOWN_BASE64,
    Limits,
)

__all__ = [
    "FORMATS",
    "LONG_EDGE",
    "MAX_BASE64",
    "MAX_PIXELS",
    "NOT_AN_IMAGE",
    "PROVIDERS",
    "SHOWN_BASE64",
    "Limits",
    "fitted",
    "fitted_messages",
]

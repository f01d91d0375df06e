"""Images built with Pillow for the tests: screenshots, photos, animations, broken files."""

from __future__ import annotations

import base64
import io
import os
from functools import cache

from PIL import Image


def encode(image: Image.Image, kind: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def noise(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """Random pixels: nothing compresses them, the worst case for a byte cap."""
    return Image.frombytes(mode, (width, height), os.urandom(width * height * len(mode)))


@cache
def screenshot_4k() -> bytes:
    """A 3840x2160 PNG of about 12 MB, as a 4K capture with busy content gives: noise
    on the top half, a flat window below."""
    image = Image.new("RGB", (3840, 2160), (240, 240, 240))
    image.paste(noise(3840, 1040), (0, 0))
    return encode(image, compress_level=1)


def decoded(data: str) -> Image.Image:
    """The image a provider would see in base64 ``data`` (fully loaded)."""
    image = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
    image.load()
    return image

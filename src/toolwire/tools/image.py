"""``Read`` of an image file: the picture itself, for a model that takes images.

An image is told by its first bytes (png, jpeg, gif, webp), never by its name, and is
read from the local disk only (the editor's ``fs/read_text_file`` carries text). It is
fitted (``toolwire.imaging``): a 4K screenshot is scaled down, a broken file becomes a
note in the result's text. The result's text says what it is; the bytes travel as an
image part of the result, which a backend without images in tool results turns into a
note (``backends._images``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from toolwire.history import ImagePart
from toolwire.history.images import image_of, sniff
from toolwire.imaging import fitted
from toolwire.tools.base import Location, ToolError, ToolResult
from toolwire.tools.context import ToolContext
from toolwire.tools.nofollow import open_regular, read_regular
from toolwire.tools.threads import off_loop

MAX_IMAGE_BYTES: Final = 64 * 1024 * 1024
"""The largest image file ``Read`` opens (it is fitted; this bounds memory only)."""
_HEAD = 16


def _head(path: Path) -> bytes:
    with open(open_regular(path), "rb") as handle:
        return handle.read(_HEAD)


async def image_type(path: Path) -> str | None:
    """The image type of the local regular file ``path`` (None: not an image)."""
    return sniff(await off_loop(lambda: _head(path)))


async def read_image(path: Path, media_type: str, size: int, ctx: ToolContext) -> ToolResult:
    """The image at ``path`` as a result; ``ToolError`` when it is too large."""
    shown = ctx.show(path)
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{shown} is a {media_type} image of {size:,} bytes, more than Read returns "
            f"({MAX_IMAGE_BYTES:,}). Make a smaller copy (e.g. with Bash) and read that."
        )
    data = await off_loop(lambda: read_regular(path))
    image = await off_loop(lambda: fitted(image_of(data, media_type)))
    what = f"The image {shown} ({media_type}, {len(data):,} bytes)"
    raw = {"path": str(path), "media_type": media_type, "bytes": len(data)}
    if not isinstance(image, ImagePart):
        return ToolResult(f"{what} cannot be shown: {image.text}", raw_output=raw)
    if image.media_type != media_type or image.size() != len(data):
        what += f" is attached as a smaller {image.media_type} of {image.size():,} bytes."
    else:
        what += " is attached."
    return ToolResult(
        content=what, locations=(Location(str(path), 1),), raw_output=raw, images=(image,)
    )


__all__ = ["MAX_IMAGE_BYTES", "image_type", "read_image"]

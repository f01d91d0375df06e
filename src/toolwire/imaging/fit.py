"""Check and fit one image: decode it whole, and re-encode what a provider would refuse.

A provider refuses the whole request for one bad image (Anthropic: 400 "invalid
base64", "image exceeds 5 MB maximum"), and since the image stays in the history, every
request after it too. So nothing is trusted: the base64 is decoded whole, the image is
opened and every pixel decoded with Pillow, and

* an image that already fits (``limits``) is returned as the very same object, so a
  cached prompt prefix stays byte-identical and no time goes into re-encoding it;
* one too large (pixels or bytes), animated, or a GIF is scaled down (Lanczos, aspect
  kept) and re-encoded: PNG for a lossless source or one with transparency when that is
  small enough, else JPEG at falling quality, smaller again until it fits;
* a PNG with a damaged ancillary chunk (a colour profile, say) loses that chunk
  (``png``), as libpng would drop it;
* one that does not decode becomes its note: ``[image: image/png, 12 KB, not sent: the
  data is not a valid PNG image]``, so the model knows an image was there.
"""

from __future__ import annotations

import base64
import binascii
import io
import warnings
from collections.abc import Sequence
from typing import Final

from PIL import Image, ImageOps

from toolwire.history import ImagePart, Message, Part, TextPart, ToolResultPart
from toolwire.history.images import sniff
from toolwire.imaging.limits import FORMATS, LONG_EDGE, MAX_BASE64, MAX_PIXELS
from toolwire.imaging.png import without_damaged_chunks

NOT_AN_IMAGE: Final = "not a PNG, JPEG, GIF or WebP image"
_TYPES: Final = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "MPO": "image/jpeg",  # a phone's JPEG with a second picture: JPEG to a provider
    "GIF": "image/gif",
    "WEBP": "image/webp",
}
_QUALITIES: Final = (85, 70, 55, 40)
_SHRINK: Final = 0.75
# Pillow's own bomb guard raises at twice this, before a plugin decodes anything.
Image.MAX_IMAGE_PIXELS = MAX_PIXELS


class _RefusedError(Exception):
    """The image cannot be sent; the message says why, for its note."""


def fitted(image: ImagePart) -> ImagePart | TextPart:
    """``image`` as every provider takes it (the same object when it already does), or
    its note when it does not decode. A URL is left to the provider that fetches it."""
    if image.url is not None:
        return image
    try:
        return _fit(image)
    except _RefusedError as exc:
        return TextPart(image.note(f"not sent: {exc}"))


def fitted_messages(messages: Sequence[Message]) -> list[Message]:
    """The history with every image ``fitted``: in user messages and in tool results (a
    result's image that does not decode becomes a note line of its text). A message
    without images is the same object."""
    return [_fitted_message(m) for m in messages]


def _fitted_message(message: Message) -> Message:
    parts: list[Part] = []
    for part in message.parts:
        if isinstance(part, ImagePart):
            parts.append(fitted(part))
        elif isinstance(part, ToolResultPart) and part.images:
            parts.append(_fitted_result(part))
        else:
            parts.append(part)
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return Message(message.role, tuple(parts), message.backend)


def _fitted_result(result: ToolResultPart) -> ToolResultPart:
    out = [fitted(i) for i in result.images]
    images = tuple(i for i in out if isinstance(i, ImagePart))
    notes = [n.text for n in out if isinstance(n, TextPart)]
    if not notes and all(a is b for a, b in zip(images, result.images, strict=True)):
        return result
    content = "\n".join([result.content, *notes] if result.content else notes)
    return ToolResultPart(result.call_id, result.name, content, result.is_error, images)


def _fit(image: ImagePart) -> ImagePart:
    text, raw = _decoded(image.data)
    kind = sniff(raw)
    if kind is None:
        raise _RefusedError(NOT_AN_IMAGE)
    try:
        picture = _opened(raw, kind)
    except _RefusedError:
        repaired = without_damaged_chunks(raw) if kind == "image/png" else None
        if repaired is None:
            raise
        picture, raw = _opened(repaired, kind), repaired
        text = base64.b64encode(raw).decode("ascii")
    kind = _TYPES.get(picture.format or "", kind)
    width, height = picture.size
    animated = getattr(picture, "n_frames", 1) > 1
    if (
        kind in FORMATS
        and max(width, height) <= LONG_EDGE
        and len(text) <= MAX_BASE64
        and not animated
    ):
        if text == image.data and kind == image.media_type:
            return image
        return ImagePart(kind, text)
    kind, data = _reencoded(picture, lossless=kind in ("image/png", "image/gif"))
    return ImagePart(kind, base64.b64encode(data).decode("ascii"))


def _decoded(data: str) -> tuple[str, bytes]:
    """The canonical base64 text (line breaks dropped) and the bytes it holds."""
    try:
        return data, base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        compact = "".join(data.split())
    try:
        return compact, base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise _RefusedError("the data is not valid base64") from None


def _opened(raw: bytes, kind: str) -> Image.Image:
    """The image with every pixel of its first frame decoded."""
    name = kind.removeprefix("image/").upper()
    too_large = f"larger than {MAX_PIXELS // 1_000_000} megapixels"
    try:
        with warnings.catch_warnings():
            # Between MAX_PIXELS and twice it Pillow only warns: the check below refuses.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            picture = Image.open(io.BytesIO(raw), formats=[name])
        width, height = picture.size
        if width * height > MAX_PIXELS:
            raise _RefusedError(f"{too_large} ({width}x{height})")
        picture.load()
    except Image.DecompressionBombError:
        raise _RefusedError(too_large) from None
    except (OSError, ValueError, SyntaxError, EOFError, IndexError, TypeError):
        # Pillow's plugins raise any of these for a corrupt or truncated file.
        raise _RefusedError(f"the data is not a valid {name} image") from None
    return picture


def _reencoded(picture: Image.Image, *, lossless: bool) -> tuple[str, bytes]:
    """The first frame, scaled to the long edge and encoded within the byte cap."""
    picture = ImageOps.exif_transpose(picture)
    alpha = picture.mode in ("RGBA", "LA", "PA", "RGBa") or "transparency" in picture.info
    if picture.mode not in ("L", "RGB") or alpha:
        picture = picture.convert("RGBA" if alpha else "RGB")
    width, height = picture.size
    scale = min(1.0, LONG_EDGE / max(width, height))
    while True:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        shrunk = picture
        if size != picture.size:  # reducing_gap: a box pre-shrink, 2-3x faster, same look
            shrunk = picture.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
        if lossless or alpha:  # text stays sharp, transparency stays
            data = _encoded(shrunk, "PNG")
            if _fits(data):
                return "image/png", data
        flat = _flattened(shrunk) if alpha else shrunk
        for quality in _QUALITIES:
            data = _encoded(flat, "JPEG", quality=quality)
            if _fits(data):
                return "image/jpeg", data
        scale *= _SHRINK


def _encoded(picture: Image.Image, kind: str, **options: int) -> bytes:
    out = io.BytesIO()
    picture.save(out, kind, **options)
    return out.getvalue()


def _flattened(picture: Image.Image) -> Image.Image:
    """An image with transparency on white, for JPEG (which has none)."""
    ground = Image.new("RGB", picture.size, (255, 255, 255))
    ground.paste(picture, mask=picture.getchannel("A"))
    return ground


def _fits(data: bytes) -> bool:
    return (len(data) + 2) // 3 * 4 <= MAX_BASE64


__all__ = ["NOT_AN_IMAGE", "fitted", "fitted_messages"]

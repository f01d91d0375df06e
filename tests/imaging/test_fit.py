"""Every image is decoded whole and fitted to what every provider takes, or named in a note."""

from __future__ import annotations

import base64
import struct
import time

import pytest
from PIL import Image

from tests.imaging.images import b64, decoded, encode, noise, screenshot_4k
from toolwire.history import ImagePart, Message, TextPart, ToolResultPart
from toolwire.imaging import LONG_EDGE, MAX_BASE64, PROVIDERS, fitted, fitted_messages


def _png(width: int = 64, height: int = 48) -> bytes:
    return encode(Image.new("RGB", (width, height), (200, 30, 30)))


def _within_every_provider(image: ImagePart) -> Image.Image:
    shown = decoded(image.data)
    for limits in PROVIDERS:
        assert image.media_type in limits.formats, limits.service
        assert limits.max_base64 is None or len(image.data) <= limits.max_base64
        assert limits.max_side is None or max(shown.size) <= limits.max_side
    assert Image.MIME[shown.format or ""] == image.media_type
    return shown


def test_a_fitting_image_is_returned_as_the_same_object() -> None:
    image = ImagePart("image/png", b64(_png()))
    assert fitted(image) is image


def test_a_png_header_followed_by_garbage_becomes_a_note() -> None:
    data = b64(_png()[:33] + b"\x00garbage" * 400)
    out = fitted(ImagePart("image/png", data))
    assert isinstance(out, TextPart)
    assert out.text.startswith("[image: image/png, 3 KB, not sent: ")
    assert "not a valid PNG image" in out.text


def test_invalid_base64_after_a_valid_head_becomes_a_note() -> None:
    data = b64(_png()) + "!!not base64!!"
    out = fitted(ImagePart("image/png", data))
    assert isinstance(out, TextPart)
    assert "not valid base64" in out.text


def test_a_truncated_png_becomes_a_note() -> None:
    whole = encode(noise(200, 200))
    out = fitted(ImagePart("image/png", b64(whole[: len(whole) // 2])))
    assert isinstance(out, TextPart)
    assert "not a valid PNG image" in out.text


def test_something_else_than_an_image_becomes_a_note() -> None:
    out = fitted(ImagePart("image/bmp", b64(b"BM not a png at all")))
    assert out == TextPart("[image: image/bmp, 19 B, not sent: not a PNG, JPEG, GIF or WebP image]")


def test_a_decompression_bomb_becomes_a_note_without_being_decoded() -> None:
    bomb = encode(Image.new("1", (20_000, 20_000)))  # 400 megapixels in ~50 KB
    started = time.perf_counter()
    out = fitted(ImagePart("image/png", b64(bomb)))
    assert time.perf_counter() - started < 1
    assert isinstance(out, TextPart)
    assert "larger than 64 megapixels" in out.text


def test_a_4k_screenshot_is_fitted_within_every_providers_limits() -> None:
    data = b64(screenshot_4k())
    assert len(data) > 3 * MAX_BASE64  # a 12 MB capture: no provider takes it as is
    out = fitted(ImagePart("image/png", data))
    assert isinstance(out, ImagePart)
    shown = _within_every_provider(out)
    assert shown.size == (LONG_EDGE, round(2160 * LONG_EDGE / 3840))


def test_a_large_side_is_scaled_to_the_long_edge_keeping_the_aspect() -> None:
    tall = ImagePart("image/jpeg", b64(encode(Image.new("RGB", (1000, 9000), "navy"), "JPEG")))
    out = fitted(tall)
    assert isinstance(out, ImagePart)
    assert _within_every_provider(out).size == (174, LONG_EDGE)


def test_a_small_image_over_the_byte_cap_is_re_encoded_under_it() -> None:
    image = ImagePart("image/png", b64(encode(noise(1500, 1200), compress_level=0)))
    assert len(image.data) > MAX_BASE64
    out = fitted(image)
    assert isinstance(out, ImagePart)
    assert out.media_type == "image/jpeg"
    _within_every_provider(out)


def test_transparency_survives_a_fit_as_png() -> None:
    image = Image.new("RGBA", (3000, 2000), (0, 0, 0, 0))
    image.paste((10, 200, 10, 255), (0, 0, 1500, 2000))
    out = fitted(ImagePart("image/png", b64(encode(image))))
    assert isinstance(out, ImagePart)
    shown = _within_every_provider(out)
    assert shown.mode == "RGBA"
    assert shown.getpixel((LONG_EDGE - 1, 10)) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("kind", "mime"), [("JPEG", "image/jpeg"), ("WEBP", "image/webp"), ("PNG", "image/png")]
)
def test_jpeg_webp_and_png_pass_as_they_are(kind: str, mime: str) -> None:
    image = ImagePart(mime, b64(encode(Image.new("RGB", (300, 200), "teal"), kind)))
    assert fitted(image) is image


def test_a_gif_is_sent_as_its_first_frame_in_png() -> None:
    # Gemini takes no GIF and OpenAI no animated one: the first frame goes, as PNG.
    frames = [Image.new("P", (40, 30), i) for i in (1, 2, 3)]
    data = encode(frames[0], "GIF", save_all=True, append_images=frames[1:])
    out = fitted(ImagePart("image/gif", b64(data)))
    assert isinstance(out, ImagePart)
    assert _within_every_provider(out).size == (40, 30)


def test_a_mislabelled_image_gets_the_type_of_its_bytes() -> None:
    data = b64(encode(Image.new("RGB", (30, 20)), "JPEG"))
    assert fitted(ImagePart("image/png", data)) == ImagePart("image/jpeg", data)


def test_line_wrapped_base64_is_sent_unwrapped() -> None:
    data = b64(_png())
    wrapped = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    assert fitted(ImagePart("image/png", wrapped)) == ImagePart("image/png", data)


def test_a_url_is_left_to_the_provider() -> None:
    image = ImagePart("image/png", url="https://example.com/a.png")
    assert fitted(image) is image


def test_a_history_is_fitted_in_user_messages_and_tool_results() -> None:
    good = ImagePart("image/png", b64(_png()))
    bad = ImagePart("image/png", base64.b64encode(_png()[:40]).decode())
    history = [
        Message("user", (TextPart("see"), good, bad)),
        Message("tool", (ToolResultPart("c1", "Read", "The image.", images=(good, bad)),)),
    ]
    out = fitted_messages(history)
    assert out[0].parts[:2] == (TextPart("see"), good)
    assert isinstance(out[0].parts[2], TextPart)
    assert "not sent" in out[0].parts[2].text
    (result,) = out[1].parts
    assert isinstance(result, ToolResultPart)
    assert result.images == (good,)
    assert result.content.startswith("The image.\n[image: image/png, 40 B, not sent: ")
    assert fitted_messages(history[:1] * 0) == []
    same = [Message("user", (TextPart("see"), good))]
    assert fitted_messages(same)[0] is same[0]


def test_a_png_with_a_damaged_colour_profile_is_sent_without_it() -> None:
    # As the MCP reference server's sample image: its iCCP checksum is wrong, which
    # libpng shrugs off and Pillow refuses.
    whole = _png()
    profile = b"iCCP" + b"icc\x00\x00" + b"\x78\x9c" + b"\x00" * 40
    damaged = struct.pack(">I", len(profile) - 4) + profile + b"\xde\xad\xbe\xef"
    data = whole[:33] + damaged + whole[33:]
    out = fitted(ImagePart("image/png", b64(data)))
    assert out == ImagePart("image/png", b64(whole))


def test_a_png_with_damaged_pixel_data_is_not_repaired() -> None:
    whole = bytearray(_png())
    whole[-20] ^= 0xFF  # inside the IDAT chunk: its checksum no longer holds
    out = fitted(ImagePart("image/png", b64(bytes(whole))))
    assert isinstance(out, TextPart)

"""``Read`` of image files: told by their bytes, returned as images, bounded in size."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.helpers import tiny_png
from tests.imaging.images import decoded, screenshot_4k
from tests.tools.support import make_project, run
from toolwire.history.images import sniff
from toolwire.imaging import LONG_EDGE
from toolwire.tools.image import MAX_IMAGE_BYTES

PNG = tiny_png()


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (PNG[:16], "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"GIF87a\x01\x00\x01\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", None),
        (b"\x89PNX", None),
        (b"", None),
    ],
)
def test_sniff_knows_the_four_types_by_their_first_bytes(head: bytes, kind: str | None) -> None:
    assert sniff(head) == kind


def test_read_returns_a_png_as_an_image_whatever_its_name(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "logo.dat").write_bytes(PNG)
    result = run("Read", {"file_path": "logo.dat"}, ctx)
    assert not result.is_error
    assert result.content == f"The image logo.dat (image/png, {len(PNG)} bytes) is attached."
    (image,) = result.images
    assert image.media_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    part = result.to_part("c1", "Read")
    assert part.images == (image,)


def test_read_refuses_an_image_over_the_limit(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    big = PNG + b"\x00" * (MAX_IMAGE_BYTES + 1 - len(PNG))
    (ctx.cwd / "big.png").write_bytes(big)
    result = run("Read", {"file_path": "big.png"}, ctx)
    assert result.is_error
    assert "more than Read returns" in result.content
    assert not result.images


def test_read_of_a_large_screenshot_returns_it_fitted(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "shot.png").write_bytes(screenshot_4k())
    result = run("Read", {"file_path": "shot.png"}, ctx)
    assert not result.is_error
    (image,) = result.images
    assert max(decoded(image.data).size) == LONG_EDGE
    assert result.content.startswith("The image shot.png (image/png, 12,")
    assert f"is attached as a smaller {image.media_type} of {image.size():,} bytes." in (
        result.content
    )


def test_read_of_a_broken_png_names_it_and_attaches_nothing(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "broken.png").write_bytes(PNG[:33] + b"garbage" * 10)
    result = run("Read", {"file_path": "broken.png"}, ctx)
    assert not result.images
    assert "cannot be shown" in result.content
    assert "not sent: the data is not a valid PNG image" in result.content


def test_a_text_file_named_png_is_read_as_text(tmp_path: Path) -> None:
    ctx = make_project(tmp_path)
    (ctx.cwd / "notes.png").write_text("not an image\n", encoding="utf-8")
    result = run("Read", {"file_path": "notes.png"}, ctx)
    assert result.content.startswith("     1\tnot an image")
    assert not result.images

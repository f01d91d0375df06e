"""What checking and fitting an image costs where it enters a session (``toolwire.imaging``).

Every pasted image, ``Read`` of an image file and MCP tool image is decoded whole and
fitted once; this measures that step on images a user really sends: a 4K and a Retina
screenshot (noisy PNGs, so they do not compress away: the worst case for size), a photo
as JPEG, and an image that already fits (checked, sent as it came). Median of N runs,
with the size before and after.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
import statistics
import time
from collections.abc import Callable

from PIL import Image

from toolwire.history import ImagePart
from toolwire.imaging import fitted


def _screenshot(width: int, height: int, seed: int) -> bytes:
    """A screenshot-like PNG: flat panels with text-like noise, as UIs look."""
    rng = random.Random(seed)
    picture = Image.new("RGB", (width, height), (30, 30, 36))
    noise = Image.frombytes("RGB", (width, height // 3), rng.randbytes(width * (height // 3) * 3))
    picture.paste(noise, (0, height // 3))
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def _photo(width: int, height: int, seed: int) -> bytes:
    rng = random.Random(seed)
    picture = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=90)
    return out.getvalue()


CASES: dict[str, Callable[[], tuple[bytes, str]]] = {
    "4K screenshot PNG 3840x2160": lambda: (_screenshot(3840, 2160, 1), "image/png"),
    "Retina screenshot PNG 2880x1800": lambda: (_screenshot(2880, 1800, 2), "image/png"),
    "photo JPEG 4032x3024": lambda: (_photo(4032, 3024, 3), "image/jpeg"),
    "fits already: PNG 1200x800": lambda: (_screenshot(1200, 800, 4), "image/png"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    print("| image | in | out | re-encoded | median ms |")
    print("|---|---:|---:|---|---:|")
    for name, make in CASES.items():
        raw, kind = make()
        image = ImagePart(kind, base64.b64encode(raw).decode("ascii"))
        times, out = [], None
        for _ in range(runs):
            start = time.perf_counter()
            out = fitted(image)
            times.append((time.perf_counter() - start) * 1000)
        assert isinstance(out, ImagePart)
        size = len(base64.b64decode(out.data))
        with Image.open(io.BytesIO(base64.b64decode(out.data))) as shown:
            shape = f"{shown.width}x{shown.height} {out.media_type.removeprefix('image/')}"
        again = "no (same object)" if out is image else "yes"
        print(
            f"| {name} | {len(raw) / 1e6:.1f} MB | {size / 1e6:.2f} MB {shape} | {again} "
            f"| {statistics.median(times):.0f} |"
        )


if __name__ == "__main__":
    main()

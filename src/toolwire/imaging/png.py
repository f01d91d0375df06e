"""A PNG whose ancillary chunks are damaged, with those chunks left out.

Pillow refuses a PNG with any bad chunk checksum, while libpng (browsers, most image
stacks) only drops a damaged ancillary chunk (a colour profile, text, EXIF) and shows
the picture. Such files are common: the MCP reference server's sample image has a
broken ``iCCP`` chunk. Leaving those chunks out gives a file every decoder takes, with
the same pixels. A damaged critical chunk (header, palette, data) is not repaired.
"""

from __future__ import annotations

import struct
import zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def without_damaged_chunks(data: bytes) -> bytes | None:
    """``data`` without its ancillary chunks whose checksum is wrong; None when nothing
    was left out, or the damage is elsewhere (a critical chunk, a cut file)."""
    if not data.startswith(_SIGNATURE):
        return None
    kept, at, dropped = [_SIGNATURE], len(_SIGNATURE), False
    while at + 12 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        end = at + 12 + length
        if end > len(data):
            return None
        body = data[at + 4 : end - 4]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(body) & 0xFFFFFFFF == crc:
            kept.append(data[at:end])
        elif body[:1].islower():  # the case of its first letter marks a chunk ancillary
            dropped = True
        else:
            return None
        at = end
        if body[:4] == b"IEND":
            break
    return b"".join(kept) if dropped else None


__all__ = ["without_damaged_chunks"]

"""The work of ``toolwire decode``, with no typer in sight.

``decode`` sits in pipes, started once per stream, so ``toolwire.cli._route`` calls
``decode_stream`` straight from the console script for a plain command line; the typer
command (``decode_cmd``) calls it for everything else.
"""

from __future__ import annotations

import json
import sys

from toolwire.cli._io import fail, provider_input
from toolwire.decode import decoder_for
from toolwire.events import EVENT_TYPES, Event, event_to_dict


def decode_stream(
    file: str | None, fmt: str | None, chunk_size: int | None, only: str | None
) -> None:
    """Decode a provider stream; print one JSON object per event with its byte offset."""
    wanted = _parse_only(only)
    with provider_input(file, fmt, chunk_size, "decoding") as (wire_format, pieces):
        decoder = decoder_for(wire_format)
        offset = 0
        for piece in pieces:
            offset += len(piece)
            _print(decoder.feed(piece), offset, wanted)
        _print(decoder.close(), offset, wanted)


def _parse_only(only: str | None) -> frozenset[str] | None:
    if only is None:
        return None
    wanted = frozenset(t.strip() for t in only.split(",") if t.strip())
    unknown = sorted(wanted - set(EVENT_TYPES))
    if unknown:
        fail(f"--only: unknown event type {', '.join(unknown)}; use {', '.join(EVENT_TYPES)}")
    return wanted


def _print(events: list[Event], offset: int, wanted: frozenset[str] | None) -> None:
    """Write the events as JSON lines and flush, so a pipe sees each chunk's events live."""
    for ev in events:
        if wanted is not None and ev.type not in wanted:
            continue
        row = event_to_dict(ev)
        row["offset"] = offset
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    sys.stdout.flush()


__all__ = ["decode_stream"]

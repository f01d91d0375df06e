"""``toolwire decode``: a provider stream in, normalized events out (JSON lines)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from toolwire.cli._io import fail, provider_input
from toolwire.decode import FORMATS, decoder_for
from toolwire.events import EVENT_TYPES, Event, event_to_dict


def _parse_only(only: str | None) -> frozenset[str] | None:
    if only is None:
        return None
    wanted = frozenset(t.strip() for t in only.split(",") if t.strip())
    unknown = sorted(wanted - set(EVENT_TYPES))
    if unknown:
        fail(f"--only: unknown event type {', '.join(unknown)}; use {', '.join(EVENT_TYPES)}")
    return wanted


def decode(
    file: Annotated[
        str | None,
        typer.Argument(
            metavar="[FILE|-]",
            help="Stream to decode; - reads standard input. Default: a bundled sample.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help=f"Wire format: {', '.join(FORMATS)}. Guessed for JSON providers if omitted.",
            show_default=False,
        ),
    ] = None,
    chunk_size: Annotated[
        int | None,
        typer.Option(
            "--chunk-size",
            min=1,
            help="Feed the input in pieces of N bytes (default: blocks as they are read).",
        ),
    ] = None,
    only: Annotated[
        str | None,
        typer.Option("--only", help="Print only these event types, comma-separated."),
    ] = None,
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


def _print(events: list[Event], offset: int, wanted: frozenset[str] | None) -> None:
    """Write the events as JSON lines and flush, so a pipe sees each chunk's events live."""
    for ev in events:
        if wanted is not None and ev.type not in wanted:
            continue
        row = event_to_dict(ev)
        row["offset"] = offset
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    sys.stdout.flush()

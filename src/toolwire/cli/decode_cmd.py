"""``toolwire decode``: a provider stream in, normalized events out (JSON lines)."""

from __future__ import annotations

import itertools
import json
import sys
from typing import Annotated

import typer

from toolwire.cli._io import chunks, fail, open_input
from toolwire.decode import FORMATS, decoder_for, sniff_format
from toolwire.events import EVENT_TYPES, Event, event_to_dict

DEFAULT_SAMPLE = "anthropic_edit.sse"


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
    if fmt is not None and fmt not in FORMATS:
        fail(f"--format: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    with open_input(file, DEFAULT_SAMPLE) as (stream, name):
        if file is None and fmt is None:
            fmt = "anthropic"
            typer.echo(f"toolwire: decoding the {name} (pass a FILE to decode your own)", err=True)
        pieces = chunks(stream, name, chunk_size)
        first = next(pieces, b"")
        if fmt is None:
            fmt = sniff_format(first)
            if fmt is None:
                fail(f"cannot tell the wire format of {name}; pass --format ({', '.join(FORMATS)})")
        decoder = decoder_for(fmt)
        offset = 0
        for piece in itertools.chain([first] if first else [], pieces):
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

"""``toolwire decode``: a provider stream in, normalized events out (JSON lines)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolwire.cli._decode_run import decode_stream
from toolwire.decode import FORMATS


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
            help=f"Format: {', '.join(FORMATS)}. Guessed for JSON providers if omitted.",
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
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            metavar="FILE",
            help="A text format's declared tools: a JSON list of {name, parameters}.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Decode a provider stream or a model's text; print one JSON object per event with its
    byte offset."""
    decode_stream(file, fmt, chunk_size, only, tools)


__all__ = ["decode"]

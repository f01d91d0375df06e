"""Input and output helpers shared by CLI commands: chunked reads, one-line errors.

No typer here: ``toolwire decode`` and ``toolwire acp`` run without loading it
(``toolwire.cli._route``), and an exit status raised as ``SystemExit`` ends a typer
command the same way ``typer.Exit`` does.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import IO, NoReturn

READ_SIZE = 65536


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line saying what is wrong and what to do, then exit non-zero."""
    note(message)
    raise SystemExit(code)


def note(message: str) -> None:
    """One line for the user on standard error, flushed (as ``typer.echo(err=True)``)."""
    sys.stderr.write(f"toolwire: {message}\n")
    sys.stderr.flush()


@contextmanager
def open_input(path: str | None, default_sample: str) -> Iterator[tuple[IO[bytes], str]]:
    """The input stream and a name for messages: FILE, ``-`` for stdin, or a sample."""
    if path == "-":
        yield sys.stdin.buffer, "standard input"
        return
    if path is None:
        opened: IO[bytes] = resources.files("toolwire.samples").joinpath(default_sample).open("rb")
        name = f"bundled sample {default_sample}"
    else:
        try:
            opened = Path(path).open("rb")  # noqa: SIM115 - closed by the with below
        except IsADirectoryError:
            fail(f"cannot read {path}: it is a directory; give a file, or - for standard input")
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror or e}; check the path")
        name = path
    with opened:
        yield opened, name


def chunks(stream: IO[bytes], name: str, size: int | None) -> Iterator[bytes]:
    """Blocks as they arrive (``size`` None), or pieces of exactly ``size`` bytes."""
    pending = b""
    while True:
        try:
            block = stream.read1(READ_SIZE) if hasattr(stream, "read1") else stream.read(READ_SIZE)
        except OSError as e:
            fail(f"cannot read {name}: {e.strerror or e}")
        if not block:
            break
        if size is None:
            yield block
            continue
        pending += block
        while len(pending) >= size:
            yield pending[:size]
            pending = pending[size:]
    if pending:
        yield pending


DEFAULT_SAMPLE = "anthropic_edit.sse"


@contextmanager
def provider_input(
    path: str | None, fmt: str | None, chunk_size: int | None, doing: str
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """Open a provider stream (FILE, ``-`` or the bundled sample) and settle its format.

    Yields the wire format (given, or guessed from the first bytes) and the input's
    pieces. ``doing`` names the command's work for the note about the bundled sample.
    """
    from toolwire.decode import FORMATS, sniff_format  # not for commands that only fail()
    from toolwire.decode.textformats import canonical

    if fmt is not None and fmt not in FORMATS:
        known = canonical(fmt)  # a text format by any of its spellings (vLLM's names)
        if known is None:
            fail(f"--format: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
        fmt = known
    with open_input(path, DEFAULT_SAMPLE) as (stream, name):
        if path is None and fmt is None:
            fmt = "anthropic"
            note(f"{doing} the {name} (pass a FILE to use your own)")
        pieces = chunks(stream, name, chunk_size)
        first = next(pieces, b"")
        if fmt is None:
            fmt = sniff_format(first)
            if fmt is None:
                fail(f"cannot tell the wire format of {name}; pass --format ({', '.join(FORMATS)})")
        yield fmt, itertools.chain([first] if first else [], pieces)

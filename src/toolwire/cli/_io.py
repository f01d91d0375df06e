"""Input and output helpers shared by CLI commands: chunked reads, one-line errors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import IO, NoReturn

import typer

READ_SIZE = 65536


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line saying what is wrong and what to do, then exit non-zero."""
    typer.echo(f"toolwire: {message}", err=True)
    raise typer.Exit(code)


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

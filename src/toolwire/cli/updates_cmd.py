"""``toolwire updates``: a provider stream in, the ACP ``session/update``s an agent sends.

The stream is decoded as ``toolwire decode`` does, then run through the tool-call
lifecycle and the update engine; each notification is printed as the exact JSON-RPC
line the agent would write. No tool is executed, so calls end ``pending`` with their
final ``rawInput`` (or ``failed`` when their arguments could not be parsed).

Time. A file carries no timing, and real time would make the output depend on how fast
this machine reads it. So the engine runs on a virtual clock that advances ``--chunk-ms``
per input chunk (default 0: the whole response arrives at once, and throttling merges
each call's changes as far as the rules allow). ``--chunk-size 200 --chunk-ms 20``
replays the response as it might arrive over a network, 200 bytes every 20 ms.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer

from toolwire.cli._io import fail, provider_input
from toolwire.decode import FORMATS, decoder_for
from toolwire.updates.profiles import PROFILES

if TYPE_CHECKING:
    from toolwire.updates.translate import ResponseTranslator
    from toolwire.updates.wire import Notification

_FILE = typer.Argument(
    metavar="[FILE|-]",
    help="Stream to translate; - reads standard input. Default: a bundled sample.",
    show_default=False,
)
_FORMAT = typer.Option(
    "--format",
    "-f",
    help=f"Wire format: {', '.join(FORMATS)}. Guessed for JSON providers if omitted.",
    show_default=False,
)
_PROFILE = typer.Option("--profile", help=f"Client profile: {', '.join(PROFILES)}.")
_SESSION = typer.Option("--session-id", help="The sessionId the notifications carry.")
_CHUNK = typer.Option("--chunk-size", min=1, help="Feed the input in pieces of N bytes.")
_CHUNK_MS = typer.Option(
    "--chunk-ms",
    min=0,
    help="Virtual ms between input chunks: time moves only per chunk (0: all at once).",
)
_INTERVAL = typer.Option(
    "--interval-ms",
    min=0,
    help=(
        "Throttle: one update per call per this many ms at most "
        "(status and title changes go at once)."
    ),
)
_CWD = typer.Option("--cwd", help="Session directory relative paths resolve against.")
_STATS = typer.Option("--stats", help="Print bytes and notification counts to stderr.")


def updates(
    file: Annotated[str | None, _FILE] = None,
    fmt: Annotated[str | None, _FORMAT] = None,
    profile: Annotated[str, _PROFILE] = "minimal",
    session_id: Annotated[str, _SESSION] = "sess_toolwire",
    chunk_size: Annotated[int | None, _CHUNK] = None,
    chunk_ms: Annotated[float, _CHUNK_MS] = 0.0,
    interval_ms: Annotated[float, _INTERVAL] = 50.0,
    cwd: Annotated[str | None, _CWD] = None,
    stats: Annotated[bool, _STATS] = False,
) -> None:
    """Print the ACP notifications an agent would send while this response streams."""
    from toolwire.updates.engine import UpdateEngine
    from toolwire.updates.translate import ResponseTranslator

    if profile not in PROFILES:
        fail(f"--profile: unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    with provider_input(file, fmt, chunk_size, "translating") as (wire_format, pieces):
        clock = _VirtualClock(chunk_ms / 1000)
        engine = UpdateEngine(session_id, profile=profile, interval=interval_ms / 1000, clock=clock)
        translator = ResponseTranslator(engine, cwd=os.path.abspath(cwd or os.getcwd()))
        _run(wire_format, pieces, translator, clock)
    if stats:
        typer.echo(engine.metrics().table(), err=True)


def _run(
    fmt: str, pieces: Iterable[bytes], translator: ResponseTranslator, clock: _VirtualClock
) -> None:
    """Decode and translate chunk by chunk, printing each chunk's notifications."""
    decoder = decoder_for(fmt)
    engine = translator.engine
    for piece in pieces:
        now = clock.tick()
        _write(engine.poll(now) + translator.feed_all(decoder.feed(piece), now))
    now = clock.tick()
    _write(translator.feed_all(decoder.close(), now) + translator.close(now))


class _VirtualClock:
    """Time that moves only when a chunk arrives: deterministic output on any machine."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self._ticks = 0

    def tick(self) -> float:
        if self._ticks:
            self.now = self._ticks * self.step
        self._ticks += 1
        return self.now

    def __call__(self) -> float:
        return self.now


def _write(notes: list[Notification]) -> None:
    """Each notification is one whole line; flush so a pipe sees them live."""
    out = sys.stdout.buffer
    for note in notes:
        out.write(note.line)
    out.flush()

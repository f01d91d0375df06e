"""The work of ``toolwire decode`` and ``toolwire acp``, with no typer in sight.

These are the commands started most often (an editor launches ``acp`` for every agent it
shows; ``decode`` sits in pipes), so ``toolwire.cli._route`` calls these functions
straight from the console script for a plain command line; their typer commands
(``decode_cmd``, ``acp_cmd``) call the same functions for everything else.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolwire.cli._io import fail, provider_input
from toolwire.decode import decoder_for
from toolwire.events import EVENT_TYPES, Event, event_to_dict

if TYPE_CHECKING:
    from toolwire.config import Config

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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


def serve_acp(
    config_file: Path | None,
    backend: str | None,
    mode: str | None,
    record: Path | None,
    log_file: Path | None,
) -> None:
    """Serve the Agent Client Protocol on stdio (what an editor launches)."""
    import asyncio

    from toolwire.agent.launch import run  # the SDK and the config load in threads
    from toolwire.config import ConfigError

    def load() -> Config:
        from toolwire.config import load_config  # pydantic, and the backends

        return load_config(config_file, backend=backend, mode=mode)

    _setup_logging(log_file)
    try:
        # Ctrl-C or SIGTERM: the server has stopped every turn and command; exit quietly.
        with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
            asyncio.run(run(load, record=str(record) if record is not None else None))
    except ConfigError as exc:
        fail(str(exc))


def _setup_logging(log_file: Path | None) -> None:
    """toolwire's own lines at INFO on stderr, everyone's at DEBUG in the log file."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    stderr = logging.StreamHandler()
    stderr.setFormatter(logging.Formatter(_FORMAT))
    stderr.setLevel(logging.INFO)
    stderr.addFilter(lambda r: r.name.startswith("toolwire") or r.levelno >= logging.WARNING)
    root.addHandler(stderr)
    if log_file is not None:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            fail(f"--log-file: cannot open {log_file}: {exc.strerror or exc}")
        handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(handler)


__all__ = ["decode_stream", "serve_acp"]

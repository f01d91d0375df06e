"""``toolwire acp``: the ACP agent on stdio, as an editor launches it.

Standard output carries the protocol and nothing else (``acp.server.open_stdio`` moves
it out of reach of stray writes); logs go to standard error, and with ``--log-file`` also
to a file, in full detail. A bad configuration is one line on stderr and exit status 2,
before any protocol traffic.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from toolwire.cli._io import fail

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def acp(
    config_file: Annotated[
        Path | None,
        typer.Option("--config", help="Config file (default: ~/.config/toolwire/config.toml)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend", help="Backend to start on: a configured name, or replay:CASSETTE."
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="ask | accept-edits | read-only | plan (default: ask; bypass: per session only).",
        ),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Append every model response to this cassette."),
    ] = None,
    log_file: Annotated[
        Path | None,
        typer.Option("--log-file", help="Also write a detailed log to this file."),
    ] = None,
) -> None:
    """Serve the Agent Client Protocol on stdio (what an editor launches)."""
    import asyncio

    from toolwire.config import ConfigError, load_config  # the config pulls in the backends

    _setup_logging(log_file)
    try:
        config = load_config(config_file, backend=backend, mode=mode)
    except ConfigError as exc:
        fail(str(exc))
    from toolwire.agent.launch import run  # loads the SDK, in a thread, only for this command

    # Ctrl-C or SIGTERM: the server has stopped every turn and command; exit quietly.
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(run(config, record=str(record) if record is not None else None))


class _Masked(logging.Formatter):
    """Lines with every URL's credentials masked: httpx logs each request's URL, and a
    ``base_url`` may carry ``user:password@`` or ``?key=``."""

    def __init__(self, mask: Callable[[str], str]) -> None:
        super().__init__(_FORMAT)
        self._mask = mask

    def format(self, record: logging.LogRecord) -> str:
        return self._mask(super().format(record))


def _setup_logging(log_file: Path | None) -> None:
    """toolwire's own lines at INFO on stderr, everyone's at DEBUG in the log file."""
    from toolwire.backends._secrets import mask_urls

    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    stderr = logging.StreamHandler()
    stderr.setFormatter(_Masked(mask_urls))
    stderr.setLevel(logging.INFO)
    stderr.addFilter(lambda r: r.name.startswith("toolwire") or r.levelno >= logging.WARNING)
    root.addHandler(stderr)
    if log_file is not None:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            fail(f"--log-file: cannot open {log_file}: {exc.strerror or exc}")
        handler.setFormatter(_Masked(mask_urls))
        root.addHandler(handler)


__all__ = ["acp"]

"""The work of ``toolwire acp``, with no typer in sight.

An editor launches ``acp`` for every agent it shows and waits for its ``initialize``
answer, so ``toolwire.cli._route`` calls ``serve_acp`` straight from the console script
for a plain command line; the typer command (``acp_cmd``) calls it for everything else.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from toolwire.cli._io import fail

if TYPE_CHECKING:
    from toolwire.config import Config

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def serve_acp(
    config_file: Path | None,
    backend: str | None,
    mode: str | None,
    record: Path | None,
    log_file: Path | None,
) -> None:
    """Serve the Agent Client Protocol on stdio (what an editor launches)."""
    from toolwire.agent.launch import serve  # the SDK and the config load in threads
    from toolwire.config import ConfigError

    def load() -> Config:
        from toolwire.config import load_config  # pydantic, and the backends

        return load_config(config_file, backend=backend, mode=mode)

    def v2() -> bool:
        from toolwire.config.peek import acp_v2  # tomllib only: no pydantic

        return acp_v2(config_file)

    _setup_logging(log_file)
    try:
        serve(load, record=str(record) if record is not None else None, v2=v2)
    except ConfigError as exc:
        fail(str(exc))


class _Masked(logging.Formatter):
    """Lines with every URL's credentials masked: httpx logs each request's URL, and a
    ``base_url`` may carry ``user:password@`` or ``?key=``."""

    def format(self, record: logging.LogRecord) -> str:
        # Imported at the first line logged, not at start-up: the package loads httpx2.
        from toolwire.secrets import mask_urls

        return mask_urls(super().format(record))


def _setup_logging(log_file: Path | None) -> None:
    """toolwire's own lines at INFO on stderr, everyone's at DEBUG in the log file."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    stderr = logging.StreamHandler()
    stderr.setFormatter(_Masked(_FORMAT))
    stderr.setLevel(logging.INFO)
    stderr.addFilter(lambda r: r.name.startswith("toolwire") or r.levelno >= logging.WARNING)
    root.addHandler(stderr)
    if log_file is not None:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:
            fail(f"--log-file: cannot open {log_file}: {exc.strerror or exc}")
        handler.setFormatter(_Masked(_FORMAT))
        root.addHandler(handler)


__all__ = ["serve_acp"]

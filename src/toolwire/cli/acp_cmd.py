"""``toolwire acp``: the ACP agent on stdio, as an editor launches it.

Standard output carries the protocol and nothing else (``acp.server.open_stdio`` moves
it out of reach of stray writes); logs go to standard error, and with ``--log-file`` also
to a file, in full detail. A bad configuration is one line on stderr, and the answer to
every request after ``initialize`` (``toolwire.agent.broken``): the editor shows it; at
the end of input, exit status 2. The work is in ``_acp_run``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolwire.cli._acp_run import serve_acp

Login = Annotated[
    bool,
    typer.Option(
        "--login",
        help="Ask for a backend's API key and store it, then exit (the editor's terminal sign-in).",
    ),
]


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
    login: Login = False,
) -> None:
    """Serve the Agent Client Protocol on stdio (what an editor launches)."""
    if login:
        from toolwire.cli.login_cmd import run_login

        run_login(config_file, backend)
        return
    serve_acp(config_file, backend, mode, record, log_file)


__all__ = ["acp"]

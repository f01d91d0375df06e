"""The ``toolwire`` command line (typer). Each command lives in its own module.

typer, and the pydantic it loads, take several times a bare interpreter's start-up, so
``main`` first offers the command line to ``toolwire.cli._route``: a plain ``toolwire
decode`` or ``toolwire acp`` runs without them. Everything else (any other command,
``--help``, an option the router does not know, a value it cannot take) goes to the typer
application in ``toolwire.cli._app``, which also gives every error its usual text.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from toolwire.cli._route import route

if TYPE_CHECKING:
    from toolwire.cli._app import app


def main() -> None:
    """Console-script entry point."""
    run = route(sys.argv[1:])
    if run is not None:
        run()
        return
    from toolwire.cli._app import app

    app()


def __getattr__(name: str) -> Any:
    # ``toolwire.cli.app`` as before, built on first use.
    if name == "app":
        from toolwire.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]

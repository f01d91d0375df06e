"""``toolwire login`` and ``toolwire logout``: a backend's API key, stored for toolwire.

``login`` asks which backend (the configured ones that take a key, and the providers
toolwire detects by their usual variables) and its key, read without echo from a
terminal, and stores it (``toolwire.config.keys``: the system keyring when there is one,
else a file only the user can read). A backend whose variable is unset then reads it.
This is also the ACP ``terminal`` auth method: an editor runs ``toolwire acp --login``.
The key is never printed: not in prompts, confirmations or errors.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolwire.cli._io import fail

_CONFIG = typer.Option("--config", metavar="FILE", help="Read this config file.")


def login(
    backend: Annotated[
        str | None, typer.Argument(help="The backend whose key to store (asked if left out).")
    ] = None,
    config_file: Annotated[Path | None, _CONFIG] = None,
) -> None:
    """Store a backend's API key where only you can read it."""
    run_login(config_file, backend)


def logout(
    backend: Annotated[
        str | None, typer.Argument(help="The backend whose key to remove (default: all).")
    ] = None,
    config_file: Annotated[Path | None, _CONFIG] = None,
) -> None:
    """Remove a key ``toolwire login`` stored (one backend's, or all)."""
    from toolwire.config.keys import forget_key, stored_names

    if backend is None:
        names = stored_names()
    else:
        names = [_variables(config_file).get(backend) or fail(_unknown(backend, config_file))]
    removed = [name for name in names if forget_key(name)]
    if not removed:
        typer.echo("No stored key to remove.")
    for name in removed:
        typer.echo(f"Removed the stored key for ${name}.")


def run_login(config_file: Path | None, backend: str | None) -> None:
    """The login dialogue (``toolwire login`` and ``toolwire acp --login``)."""
    from toolwire.config.keys import store_key

    choices = _variables(config_file)
    if not choices:
        fail("no backend takes an API key here")
    if backend is None:
        typer.echo("Backends: " + ", ".join(f"{n} (${v})" for n, v in choices.items()), err=True)
        backend = _ask("Backend", default=next(iter(choices)))
    variable = choices.get(backend)
    if variable is None:
        fail(_unknown(backend, config_file))
    key = _ask(f"API key for {backend} (${variable})", secret=True)
    if not key:
        fail("no key given; nothing stored")
    where = store_key(variable, key)
    place = "the system keyring" if where == "keyring" else "a file only you can read"
    typer.echo(f"Stored the key for {backend} in {place}; ${variable}, when set, still wins.")


def _variables(config_file: Path | None) -> dict[str, str]:
    """Backend name -> the variable its key is read from: configured backends first, then
    the providers toolwire detects."""
    from toolwire.config import ConfigError, load_config
    from toolwire.config.load import DETECTED

    try:
        cfg = load_config(config_file)
    except ConfigError as e:
        fail(str(e))
    found = {n: b.api_key_env for n, b in cfg.backends.items() if b.api_key_env}
    default = cfg.default_backend
    ordered = {default: found[default]} if default in found else {}
    ordered |= found
    for name, _provider, _model, variables in DETECTED:
        ordered.setdefault(name, variables[0])
    return ordered


def _unknown(backend: str, config_file: Path | None) -> str:
    known = ", ".join(_variables(config_file))
    return f"no backend {backend!r} takes a key; choose one of: {known}"


def _ask(prompt: str, *, default: str | None = None, secret: bool = False) -> str:
    """A line from the user; a secret one without echo when stdin is a terminal (piped
    input, as a script or a test gives, is read as a plain line)."""
    shown = f"{prompt} [{default}]: " if default else f"{prompt}: "
    if sys.stdin.isatty():
        answer = getpass.getpass(shown) if secret else input(shown)
    else:
        sys.stderr.write(shown)
        sys.stderr.flush()
        answer = sys.stdin.readline()
    return answer.strip() or (default or "")


__all__ = ["login", "logout", "run_login"]

"""``toolwire config``: the effective configuration, keys masked, and where each value came from."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolwire.cli._io import fail

if TYPE_CHECKING:
    from toolwire.config import Config
    from toolwire.config.schema import BackendConfig

_BACKEND_FIELDS = ("provider", "model", "base_url", "tool_format", "cassette", "passthrough")
_TABLES = ("limits", "handoff", "tools")


def config(
    config_file: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Read this config file instead of the default one.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print the effective configuration: every value, and where it came from."""
    from toolwire.config import ConfigError, load_config

    try:
        cfg = load_config(config_file)
    except ConfigError as e:
        fail(str(e))
    for line in render(cfg, os.environ):
        typer.echo(line)


def render(cfg: Config, environ: Any) -> list[str]:
    """The lines ``toolwire config`` prints."""
    state = "found" if cfg.file_found else "not found: built-in defaults"
    lines = [f"# config file: {cfg.file} ({state}; {cfg.source('config')})"]
    rows: list[tuple[str, str, str]] = [
        ("default_backend", cfg.default_backend, cfg.source("default_backend")),
        ("mode", cfg.mode, cfg.source("mode")),
        ("profile", cfg.profile or "(by client)", cfg.source("profile")),
    ]
    lines += _table(rows)
    for name, backend in cfg.backends.items():
        lines += ["", f"[backends.{name}]"]
        lines += _table(_backend_rows(cfg, backend, environ))
    for section in _TABLES:
        values = getattr(cfg, section).model_dump()
        lines += ["", f"[{section}]"]
        lines += _table([(k, _show(v), cfg.source(f"{section}.{k}")) for k, v in values.items()])
    if cfg.notice:
        lines += ["", f"# {cfg.notice}"]
    return lines


def _show(value: Any) -> str:
    """A table value as the file would write it (lists as TOML arrays)."""
    if isinstance(value, list):
        return "[" + ", ".join(f'"{item}"' for item in value) + "]"
    return f"{value:g}"


def _backend_rows(cfg: Config, backend: BackendConfig, environ: Any) -> list[tuple[str, str, str]]:
    whole = cfg.sources.get(f"backends.{backend.name}")
    rows = []
    for key in _BACKEND_FIELDS:
        value = getattr(backend, key)
        if value in (None, "") and (key != "model" or backend.provider == "replay"):
            continue
        source = cfg.sources.get(f"backends.{backend.name}.{key}", whole or "default")
        rows.append((key, str(value) if value else "(none)", source))
    if backend.provider != "replay":
        rows.append(("api_key", *_key(backend, environ)))
    return rows


def _key(backend: BackendConfig, environ: Any) -> tuple[str, str]:
    if backend.api_key_env is None:
        return "(none: no key is sent)", "no api_key_env"
    key = backend.api_key(environ)
    if key is None:
        return "(not set)", f"${backend.api_key_env} is empty"
    from toolwire.config.schema import mask

    return mask(key), f"from ${backend.api_key_env}"


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    width = max((len(k) for k, _, _ in rows), default=0)
    value_width = min(40, max((len(v) for _, v, _ in rows), default=0))
    return [f"{k.ljust(width)} = {v.ljust(value_width)}  ({s})" for k, v, s in rows]


__all__ = ["config", "render"]

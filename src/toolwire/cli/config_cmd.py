"""``toolwire config``: the effective configuration, keys masked, and where each value came from."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolwire.cli._io import fail

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolwire.config import Config
    from toolwire.config.mcp import McpServerTable
    from toolwire.config.schema import BackendConfig

_BACKEND_FIELDS = (
    "provider",
    "model",
    "base_url",
    "tool_format",
    "cassette",
    "passthrough",
    "prompt_cache",
    "vision",
    "thought_level",
)
_TABLES = ("limits", "handoff", "compaction", "checkpoints", "subagents", "tools")


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
    for line in render(cfg, os.environ, cwd=os.getcwd()):
        typer.echo(line)


def render(cfg: Config, environ: Any, *, cwd: str | None = None) -> list[str]:
    """The lines ``toolwire config`` prints (with ``cwd``: the instruction files and
    custom commands a session there would load)."""
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
        lines += _section(cfg, section, getattr(cfg, section))
    lines += _sandbox_state(cfg)
    for name, server in cfg.mcp_servers.items():
        lines += ["", f"[mcp_servers.{name}]"]
        lines += _table(_server_rows(cfg, name, server, environ))
    if cwd is not None:
        lines += ["", *_session_files(cwd, environ)]
    if cfg.no_backend:
        lines += ["", f"# {cfg.no_backend}"]
    return lines


def _section(cfg: Config, section: str, table: BaseModel) -> list[str]:
    """``[section]`` and its values; a table inside it (``[tools.web]``) follows as its
    own section."""
    from pydantic import BaseModel

    values = {key: getattr(table, key) for key in type(table).model_fields}
    inner = {k: v for k, v in values.items() if isinstance(v, BaseModel)}
    plain = [(k, v) for k, v in values.items() if k not in inner]
    rows = [(k, _show(v), cfg.source(f"{section}.{k}")) for k, v in plain]
    lines = ["", f"[{section}]", *_table(rows)]
    for key, value in inner.items():
        lines += _section(cfg, f"{section}.{key}", value)
    return lines


def _session_files(cwd: str, environ: Any) -> list[str]:
    """The instruction files (in prompt order) and custom commands of a session in ``cwd``."""
    from toolwire.agent.features.commands import custom_commands
    from toolwire.agent.session.instructions import MAX_BYTES, NAMES, Refused, scan

    files, refused = scan(cwd, environ)
    lines = [
        f"# instruction files for a session in {cwd} (in prompt order, {MAX_BYTES // 1024} KB cap):"
    ]
    for path in files:
        try:
            lines.append(f"#   {path} ({path.stat().st_size} bytes)")
        except OSError:  # gone since it was found
            continue
    if not files:
        lines.append(f"#   none ({', '.join(NAMES)} from the repository root to here)")
    skipped: list[Refused] = []
    commands = custom_commands(cwd, environ, skipped)
    if commands:
        lines.append("# custom commands:")
        lines += [f"#   /{c.name}: {c.origin}" for c in commands.values()]
    if refused or skipped:
        lines.append("# skipped (links out of the project):")
        lines += [f"#   {r.notice()}" for r in (*refused, *skipped)]
    return lines


def _server_rows(
    cfg: Config, name: str, server: McpServerTable, environ: Any
) -> list[tuple[str, str, str]]:
    """One MCP server's keys; env and header values masked unless they only name
    variables (then whether those are set)."""
    from toolwire.config.mcp import mask_args
    from toolwire.secrets import mask_urls

    def source(key: str) -> str:
        return cfg.sources.get(f"mcp_servers.{name}.{key}", "default")

    rows: list[tuple[str, str, str]] = [("transport", f'"{server.kind}"', source("transport"))]
    for key in ("command", "args", "cwd", "url"):
        value = getattr(server, key)
        if key == "args":
            value = mask_args(value)  # keys passed on the command line are not shown
        if value:
            shown = _show(mask_urls(value)) if key == "url" else _show(value)
            rows.append((key, shown, source(key)))
    for key in ("env", "headers"):
        values = getattr(server, key)
        if values:
            rows.append((key, _masked(values, environ), source(key)))
    rows += [(key, _show(getattr(server, key)), source(key)) for key in ("enabled", "timeout")]
    tools = server.tools
    if tools.allow or tools.deny:
        shown = f"{{allow = {_show(tools.allow)}, deny = {_show(tools.deny)}}}"
        rows.append(("tools", shown, source("tools")))
    rows.append(("trusted", _show(server.trusted), source("trusted")))
    return rows


def _masked(values: dict[str, str], environ: Any) -> str:
    """An env or headers table with its secrets masked; a value that only names
    variables is shown, with those not set in ``environ``."""
    from toolwire.config.mcp import VARIABLE
    from toolwire.secrets import mask, mask_keys

    shown = []
    for key, value in values.items():
        names = VARIABLE.findall(value)
        if names and mask_keys(value) != value:  # a key beside the names
            shown.append(f'{key} = "{mask_keys(value)}"')
        elif names:
            unset = [n for n in names if not environ.get(n)]
            note = f" (not set: {', '.join(unset)})" if unset else ""
            # Only names: the schema rejected literal secrets beside them.
            shown.append(f'{key} = "{value}"{note}')
        else:
            shown.append(f'{key} = "{mask(value)}"')
    return "{" + ", ".join(shown) + "}"


def _sandbox_state(cfg: Config) -> list[str]:
    """Whether the sandbox can run here: the probe a session makes at start-up."""
    if cfg.tools.sandbox.mode == "off":
        return []
    from toolwire.sandbox import probe

    found = probe()
    if found.mechanism is None:
        return [f"# sandbox: off here: {found.reason}"]
    return [f"# sandbox: {found.mechanism}"]


def _show(value: Any) -> str:
    """A table value as the file would write it (lists as TOML arrays)."""
    if value is None:  # an optional key left out (``[tools.web] search``)
        return "(unset)"
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}" = {_show(v)}' for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(f'"{item}"' for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int):
        return str(value)  # a byte count in full, not 5e+06
    return f"{value:g}"


def _backend_rows(cfg: Config, backend: BackendConfig, environ: Any) -> list[tuple[str, str, str]]:
    from toolwire.secrets import mask_urls

    whole = cfg.sources.get(f"backends.{backend.name}")
    rows = []
    for key in _BACKEND_FIELDS:
        value = getattr(backend, key)
        if value in (None, "") and (key != "model" or backend.provider == "replay"):
            continue
        source = cfg.sources.get(f"backends.{backend.name}.{key}", whole or "default")
        shown = _show(value) if isinstance(value, bool) else str(value) if value else "(none)"
        rows.append((key, mask_urls(shown) if key == "base_url" else shown, source))
    if backend.provider != "replay":
        rows.append(("rescue", backend.rescue_mode, _rescue_source(cfg, backend, whole)))
        rows += _window_rows(cfg, backend, whole or "default")
        rows.append(("api_key", *_key(backend, environ)))
    return rows


def _rescue_source(cfg: Config, backend: BackendConfig, whole: str | None) -> str:
    if backend.rescue is not None:
        return cfg.sources.get(f"backends.{backend.name}.rescue", whole or "default")
    if backend.rescue_mode == "auto":
        return "default: a base_url server that is not the provider's own"
    return "default"


def _window_rows(cfg: Config, backend: BackendConfig, whole: str) -> list[tuple[str, str, str]]:
    """``context_window`` and ``max_output_tokens`` as the agent will use them, and the
    price when one is set."""
    from toolwire.context import backend_window

    window = backend_window(backend, cfg.limits)

    def source(key: str, fallback: str) -> str:
        return cfg.sources.get(f"backends.{backend.name}.{key}", fallback)

    size_source = source("context_window", whole) if window.source == "config" else window.source
    if not window.known:
        size_source = "unknown model: a conservative default; set context_window"
    rows = [
        ("context_window", str(window.size), size_source),
        (
            "max_output_tokens",
            str(window.reserved),
            source("max_output_tokens", "limits.max_tokens or the model's limit"),
        ),
    ]
    price = backend.price_per_mtok
    if price is not None:
        per = ", ".join(f"{k} = {_show(v)}" for k, v in price.model_dump(exclude_none=True).items())
        rows.append(("price_per_mtok", "{" + per + "}", source("price_per_mtok", whole)))
    return rows


def _key(backend: BackendConfig, environ: Any) -> tuple[str, str]:
    if backend.api_key_env is None:
        return "(none: no key is sent)", "no api_key_env"
    key = backend.api_key(environ)
    if key is None:
        return "(not set)", f"${backend.api_key_env} is empty"
    from toolwire.secrets import mask

    return mask(key), f"from ${backend.api_key_env}"


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    width = max((len(k) for k, _, _ in rows), default=0)
    value_width = min(40, max((len(v) for _, v, _ in rows), default=0))
    return [f"{k.ljust(width)} = {v.ljust(value_width)}  ({s})" for k, v, s in rows]


__all__ = ["config", "render"]

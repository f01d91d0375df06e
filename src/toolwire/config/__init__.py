"""toolwire's configuration: a TOML file, environment overrides, command-line overrides.

Precedence, lowest first: built-in defaults < the config file < environment variables <
command-line options. The file is ``$TOOLWIRE_CONFIG``, else
``$XDG_CONFIG_HOME/toolwire/config.toml`` (default ``~/.config/toolwire/config.toml``)::

    default_backend = "claude"
    mode = "ask"                       # ask | accept-edits | read-only
    profile = "minimal"                # minimal | verbose | full (default: by client)

    [backends.claude]
    provider = "anthropic"             # or openai-chat | openai-responses | gemini | replay
    model = "claude-sonnet-5"
    api_key_env = "ANTHROPIC_API_KEY"  # the NAME of the variable holding the key
    passthrough = "full"               # toolwire proxy: full | core | off (default: by host)

    [backends.local]
    provider = "openai-chat"
    base_url = "http://127.0.0.1:11434/v1"
    model = "qwen3-coder"
    tool_format = "qwen3-coder"        # native | xml-tags | hermes | qwen3-coder

    [limits]                           # see config_schema.Limits
    [handoff]                          # see config_schema.HandoffConfig

Environment: ``TOOLWIRE_CONFIG``, ``TOOLWIRE_BACKEND`` (a name, or ``replay:CASSETTE``),
``TOOLWIRE_MODEL`` (the selected backend's model), ``TOOLWIRE_MODE``, ``TOOLWIRE_PROFILE``.
With no backend configured, one is made for each provider whose key is in the
environment; a ``demo`` replay backend on the bundled cassette is always there, and is
the default when nothing else is. Every value remembers where it came from.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolwire.backends.replay import demo_cassette
from toolwire.config.schema import (
    MODES,
    PROFILES,
    TOP_KEYS,
    BackendConfig,
    ConfigError,
    HandoffConfig,
    Limits,
    check_keys,
    file_backends,
    numbers,
    string,
    table,
)

DEFAULT = "default"
#: Providers detected from the environment when no backend is configured, in order.
DETECTED = (
    ("anthropic", "anthropic", "claude-sonnet-5", ("ANTHROPIC_API_KEY",)),
    ("openai", "openai-responses", "gpt-5.4", ("OPENAI_API_KEY",)),
    ("gemini", "gemini", "gemini-2.5-flash", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
)


@dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration; ``sources`` says where each value came from."""

    backends: Mapping[str, BackendConfig]
    default_backend: str
    mode: str = "ask"
    profile: str | None = None
    limits: Limits = field(default_factory=Limits)
    handoff: HandoffConfig = field(default_factory=HandoffConfig)
    file: Path | None = None
    file_found: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)
    notice: str | None = None
    """Plain words for the user when toolwire fell back to the demo cassette."""

    def backend(self, name: str | None = None) -> BackendConfig:
        """The named backend (default: the default one)."""
        key = name or self.default_backend
        try:
            return self.backends[key]
        except KeyError:
            known = ", ".join(self.backends)
            raise ConfigError(f"unknown backend {key!r}; defined: {known}") from None

    def source(self, key: str) -> str:
        """Where the value at dotted ``key`` came from (``default`` if unrecorded)."""
        return self.sources.get(key, DEFAULT)


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user's config file: ``$XDG_CONFIG_HOME/toolwire/config.toml`` or ``~/.config/...``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "toolwire" / "config.toml"


def load_config(
    path: str | Path | None = None,
    *,
    backend: str | None = None,
    mode: str | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Load the effective configuration. Arguments are command-line overrides."""
    env = os.environ if environ is None else environ
    file, origin = _choose_file(path, env)
    data = _read(file, origin) if file.exists() else {}
    where = str(file)
    check_keys(data, TOP_KEYS, where, "the top level")
    sources: dict[str, str] = {"config": origin}
    backends = _backends(data, file, env, sources)
    default = _default_backend(data, where, backend, env, backends, sources)
    chosen_mode, sources["mode"] = _pick(
        ("--mode", mode),
        ("$TOOLWIRE_MODE", env.get("TOOLWIRE_MODE")),
        (where, string(data, "mode", where)),
        (DEFAULT, "ask"),
    )
    chosen_profile, sources["profile"] = _pick(
        ("--profile", profile),
        ("$TOOLWIRE_PROFILE", env.get("TOOLWIRE_PROFILE")),
        (where, string(data, "profile", where)),
        (DEFAULT, None),
    )
    _check_choice("mode", chosen_mode, MODES, sources["mode"])
    _check_choice("profile", chosen_profile, PROFILES, sources["profile"])
    limits = numbers(Limits, table(data.get("limits", {}), where, "limits"), where, "limits")
    handoff = numbers(
        HandoffConfig, table(data.get("handoff", {}), where, "handoff"), where, "handoff"
    )
    sources.update(
        {f"limits.{k}": where for k in limits} | {f"handoff.{k}": where for k in handoff}
    )
    return Config(
        backends=backends,
        default_backend=default,
        mode=chosen_mode or "ask",
        profile=chosen_profile,
        limits=Limits(**limits),
        handoff=HandoffConfig(**handoff),
        file=file,
        file_found=file.exists(),
        sources=sources,
        notice=_notice(backends[default], sources["default_backend"]),
    )


def _backends(
    data: dict[str, Any], file: Path, env: Mapping[str, str], sources: dict[str, str]
) -> dict[str, BackendConfig]:
    """The file's backends, else those the environment's keys allow; plus ``demo``."""
    backends = file_backends(data.get("backends", {}), file, sources)
    if not backends:
        backends = _detected(env, sources)
    if "demo" not in backends:
        backends["demo"] = BackendConfig("demo", "replay", cassette=str(demo_cassette()))
        sources["backends.demo"] = "built in"
    return backends


def _default_backend(
    data: dict[str, Any],
    where: str,
    cli: str | None,
    env: Mapping[str, str],
    backends: dict[str, BackendConfig],
    sources: dict[str, str],
) -> str:
    """The backend a session starts on, checked; ``$TOOLWIRE_MODEL`` applies to it."""
    default, source = _pick(
        ("--backend", cli),
        ("$TOOLWIRE_BACKEND", env.get("TOOLWIRE_BACKEND")),
        (where, string(data, "default_backend", where)),
        (DEFAULT, next(iter(backends))),
    )
    default = _replay_arg(default, source, backends, sources)
    if default not in backends:
        raise ConfigError(
            f"unknown backend {default!r} (from {source}); defined: {', '.join(backends)}; "
            "add a [backends.NAME] table or pick one of those"
        )
    sources["default_backend"] = source
    if env.get("TOOLWIRE_MODEL"):
        backends[default] = replace(backends[default], model=env["TOOLWIRE_MODEL"])
        sources[f"backends.{default}.model"] = "$TOOLWIRE_MODEL"
    return str(default)


def _choose_file(path: str | Path | None, env: Mapping[str, str]) -> tuple[Path, str]:
    if path is not None:
        file, origin = Path(path).expanduser(), "--config"
    elif env.get("TOOLWIRE_CONFIG"):
        file, origin = Path(env["TOOLWIRE_CONFIG"]).expanduser(), "$TOOLWIRE_CONFIG"
    else:
        return config_path(env), DEFAULT
    if not file.is_file():
        raise ConfigError(f"config file {file} (from {origin}) does not exist; check the path")
    return file, origin


def _read(file: Path, origin: str) -> dict[str, Any]:
    try:
        with file.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{file}: invalid TOML ({e}); fix the syntax") from e
    except OSError as e:
        raise ConfigError(f"cannot read {file} (from {origin}): {e.strerror or e}") from e


def _pick(*candidates: tuple[str, str | None]) -> tuple[Any, str]:
    """The first candidate with a value, and its source."""
    for source, value in candidates:
        if value is not None and value != "":
            return value, source
    return None, DEFAULT


def _check_choice(key: str, value: str | None, choices: tuple[str, ...], source: str) -> None:
    if value is not None and value not in choices:
        raise ConfigError(
            f"{key} {value!r} (from {source}) is not valid; use one of {', '.join(choices)}"
        )


def _detected(env: Mapping[str, str], sources: dict[str, str]) -> dict[str, BackendConfig]:
    """A backend for each provider whose key is in the environment (no config needed)."""
    out: dict[str, BackendConfig] = {}
    for name, provider, model, key_names in DETECTED:
        key_env = next((k for k in key_names if env.get(k)), None)
        if key_env is not None:
            out[name] = BackendConfig(name, provider, model, api_key_env=key_env)
            sources[f"backends.{name}"] = f"detected: ${key_env} is set"
    return out


def _replay_arg(
    value: str, source: str, backends: dict[str, BackendConfig], sources: dict[str, str]
) -> str:
    """``replay:CASSETTE`` makes a ``replay`` backend serving that cassette."""
    if not value.startswith("replay:"):
        return value
    cassette = Path(value.removeprefix("replay:")).expanduser()
    if not cassette.is_file():
        raise ConfigError(f"cassette {cassette} (from {source}) does not exist; check the path")
    backends["replay"] = BackendConfig("replay", "replay", cassette=str(cassette.resolve()))
    sources["backends.replay"] = source
    return "replay"


def _notice(chosen: BackendConfig, source: str) -> str | None:
    if chosen.name != "demo" or source != DEFAULT:
        return None
    keys = ", ".join(f"${k}" for *_, names in DETECTED for k in names)
    return (
        f"No backend is configured and no API key is set ({keys}), so this session replays "
        "toolwire's bundled demo recording instead of calling a model. Set one of those keys, "
        "or configure a backend in ~/.config/toolwire/config.toml, to use a real model."
    )


__all__ = [
    "DETECTED",
    "BackendConfig",
    "Config",
    "ConfigError",
    "HandoffConfig",
    "Limits",
    "config_path",
    "load_config",
]

"""The effective configuration: defaults < the file < environment < command line.

Every value remembers where it came from (``Config.sources``), for ``toolwire config``.
The file's shape is checked by ``schema.ConfigFile``; this module decides precedence,
fills in backends when none are configured and checks the values that arrive from the
environment or the command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar, cast, get_args

from toolwire.config.choices import (
    DEFAULT_MODE,
    MODES,
    PROFILES,
    SESSION_ONLY_MODES,
    Mode,
    Profile,
    Provider,
)
from toolwire.config.errors import ConfigError
from toolwire.config.explain import invalid_choice
from toolwire.config.keys import config_dir, stored_key
from toolwire.config.mcp import McpServerTable
from toolwire.config.read import validated
from toolwire.config.sandbox import SandboxMode
from toolwire.config.schema import (
    AcpConfig,
    BackendConfig,
    CheckpointsConfig,
    CompactionConfig,
    ConfigFile,
    HandoffConfig,
    LimitsConfig,
    SubagentsConfig,
    ToolsConfig,
)
from toolwire.providers import PROFILES as PROVIDER_PROFILES
from toolwire.samples import DEMO_CASSETTE

DEFAULT = "default"


def detected() -> tuple[tuple[str, Provider, str, tuple[str, ...]], ...]:
    """(backend name, provider, model, key variables) of each provider whose profile says
    how to detect it, in the profiles' order."""
    return tuple(
        (d.name, cast(Provider, p.wire_format), d.model, d.key_envs)
        for p in PROVIDER_PROFILES.values()
        if (d := p.detected) is not None
    )


DETECTED: Final = detected()
"""The built-in providers detected from the environment when no backend is configured."""
_C = TypeVar("_C", bound=str)


@dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration; ``sources`` says where each value came from."""

    backends: Mapping[str, BackendConfig]
    default_backend: str
    mode: Mode = DEFAULT_MODE
    profile: Profile | None = None
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    handoff: HandoffConfig = field(default_factory=HandoffConfig)
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    checkpoints: CheckpointsConfig = field(default_factory=CheckpointsConfig)
    subagents: SubagentsConfig = field(default_factory=SubagentsConfig)
    acp: AcpConfig = field(default_factory=AcpConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    file: Path | None = None
    file_found: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)
    no_backend: str | None = None
    """What is missing when no backend is configured and no key is set (one line: which
    variables to set, or ``toolwire login``). The default is then the ``demo`` backend,
    which the agent never runs unasked: it answers with this line instead
    (``toolwire demo`` and ``--backend demo`` run the demo)."""
    proxy: Mapping[str, Any] = field(default_factory=dict)
    """The file's ``[proxy]`` table, checked by ``toolwire proxy`` when it starts."""
    mcp_servers: Mapping[str, McpServerTable] = field(default_factory=dict)
    """The file's ``[mcp_servers.NAME]`` tables, disabled ones too (``toolwire.mcp``)."""

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
    return config_dir(environ) / "config.toml"


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
    where = str(file)
    data = validated(file, origin)
    sources: dict[str, str] = {"config": origin}
    backends = _backends(data, file, env, sources)
    default = _default_backend(data, where, backend, env, backends, sources)
    chosen_mode, chosen_profile = _mode_and_profile(data, where, mode, profile, env, sources)
    sources.update(_file_sources(data, where))
    return Config(
        backends=backends,
        default_backend=default,
        mode=_default_mode(chosen_mode, sources["mode"]),
        profile=_choice("profile", chosen_profile, PROFILES, sources["profile"]),
        limits=data.limits,
        handoff=data.handoff,
        compaction=data.compaction,
        checkpoints=data.checkpoints,
        subagents=data.subagents,
        acp=data.acp,
        tools=_sandbox_mode(data, env, sources),
        file=file,
        file_found=file.exists(),
        sources=sources,
        no_backend=_no_backend(backends[default], sources["default_backend"]),
        proxy=data.proxy,
        mcp_servers=data.mcp_servers,
    )


def _mode_and_profile(
    data: ConfigFile,
    where: str,
    mode: str | None,
    profile: str | None,
    env: Mapping[str, str],
    sources: dict[str, str],
) -> tuple[str | None, str | None]:
    """The mode and profile chosen (flag, then variable, then file); ``sources`` says
    which."""
    chosen_mode, sources["mode"] = _pick(
        ("--mode", mode), ("$TOOLWIRE_MODE", env.get("TOOLWIRE_MODE")), (where, data.mode)
    )
    env_profile = env.get("TOOLWIRE_PROFILE")
    chosen_profile, sources["profile"] = _pick(
        ("--profile", profile), ("$TOOLWIRE_PROFILE", env_profile), (where, data.profile)
    )
    return chosen_mode, chosen_profile


def _file_sources(data: ConfigFile, where: str) -> dict[str, str]:
    """Where each setting the file sets came from (``toolwire config`` shows it)."""
    sources: dict[str, str] = {}
    for section, table in (
        ("limits", data.limits),
        ("handoff", data.handoff),
        ("compaction", data.compaction),
        ("checkpoints", data.checkpoints),
        ("subagents", data.subagents),
        ("acp", data.acp),
        ("tools", data.tools),
        ("tools.sandbox", data.tools.sandbox),
    ):
        sources.update({f"{section}.{key}": where for key in table.model_fields_set})
    sources.update({f"tools.web.{key}": where for key in data.tools.web.model_fields_set})
    for name, server in data.mcp_servers.items():
        sources.update({f"mcp_servers.{name}.{key}": where for key in server.model_fields_set})
    return sources


def _backends(
    data: ConfigFile, file: Path, env: Mapping[str, str], sources: dict[str, str]
) -> dict[str, BackendConfig]:
    """The file's backends, else those the environment's keys allow; plus ``demo``."""
    backends: dict[str, BackendConfig] = {}
    for name, table in data.backends.items():
        backends[name] = table.named(name, file)
        sources.update({f"backends.{name}.{key}": str(file) for key in table.model_fields_set})
    if not backends:
        backends = _detected(env, sources)
    if "demo" not in backends:
        backends["demo"] = BackendConfig(
            name="demo", provider="replay", cassette=str(DEMO_CASSETTE)
        )
        sources["backends.demo"] = "built in"
    return backends


def _default_backend(
    data: ConfigFile,
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
        (where, data.default_backend),
        (DEFAULT, next(iter(backends))),
    )
    default = _replay_arg(str(default), source, backends, sources)
    if default not in backends:
        raise ConfigError(
            f"unknown backend {default!r} (from {source}); defined: {', '.join(backends)}; "
            "add a [backends.NAME] table or pick one of those"
        )
    sources["default_backend"] = source
    if env.get("TOOLWIRE_MODEL"):
        backends[default] = backends[default].model_copy(update={"model": env["TOOLWIRE_MODEL"]})
        sources[f"backends.{default}.model"] = "$TOOLWIRE_MODEL"
    return default


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


def _sandbox_mode(data: ConfigFile, env: Mapping[str, str], sources: dict[str, str]) -> ToolsConfig:
    """``[tools]``, its sandbox's ``mode`` from ``$TOOLWIRE_SANDBOX`` when set (a container
    or a CI job that has its own confinement: ``TOOLWIRE_SANDBOX=off``)."""
    value = env.get("TOOLWIRE_SANDBOX")
    if not value:
        return data.tools
    if value not in get_args(SandboxMode):
        raise ConfigError(
            f"$TOOLWIRE_SANDBOX is {value!r}: use one of {', '.join(get_args(SandboxMode))}"
        )
    sources["tools.sandbox.mode"] = "$TOOLWIRE_SANDBOX"
    sandbox = data.tools.sandbox.model_copy(update={"mode": value})
    return data.tools.model_copy(update={"sandbox": sandbox})


def _pick(*candidates: tuple[str, str | None]) -> tuple[str | None, str]:
    """The first candidate with a value, and its source."""
    for source, value in candidates:
        if value is not None and value != "":
            return value, source
    return None, DEFAULT


def _default_mode(value: str | None, source: str) -> Mode:
    """The mode new sessions start in; ``bypass`` is refused (a user picks it per session)."""
    mode = _choice("mode", value, MODES, source) or DEFAULT_MODE
    if mode in SESSION_ONLY_MODES:
        raise ConfigError(
            f"mode {mode!r} (from {source}) cannot be the default: nothing would ask before edits "
            "and commands. Choose it for one session in the editor instead."
        )
    return mode


def _choice(key: str, value: str | None, choices: tuple[_C, ...], source: str) -> _C | None:
    """``value`` as one of ``choices`` (None stays None), or a one-line error."""
    for choice in choices:
        if value == choice:
            return choice
    if value is None:
        return None
    raise ConfigError(invalid_choice(key, value, choices, source))


def _detected(env: Mapping[str, str], sources: dict[str, str]) -> dict[str, BackendConfig]:
    """A backend for each provider whose key is in the environment (no config needed)."""
    out: dict[str, BackendConfig] = {}
    for name, provider, model, key_names in detected():
        key_env = next((k for k in key_names if env.get(k)), None)
        how = "is set"
        if key_env is None:  # a key ``toolwire login`` stored counts as one set
            key_env = next((k for k in key_names if stored_key(k, env)), None)
            how = "is stored (toolwire login)"
        if key_env is not None:
            out[name] = BackendConfig(
                name=name, provider=provider, model=model, api_key_env=key_env
            )
            sources[f"backends.{name}"] = f"detected: ${key_env} {how}"
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
    resolved = str(cassette.resolve())
    backends["replay"] = BackendConfig(name="replay", provider="replay", cassette=resolved)
    sources["backends.replay"] = source
    return "replay"


def _no_backend(chosen: BackendConfig, source: str) -> str | None:
    if chosen.name != "demo" or source != DEFAULT:
        return None
    first, *others = (f"${k}" for *_, names in detected() for k in names)
    return (
        f"No model to call: no backend is configured and no API key is set. Set {first} "
        f"(or {', '.join(others)}) where the editor starts toolwire, or run `toolwire login`, "
        "or add a [backends.NAME] table to ~/.config/toolwire/config.toml; then restart "
        "the agent. Nothing was run. (`toolwire demo` replays a recorded session.)"
    )


__all__ = ["DETECTED", "Config", "config_path", "detected", "load_config"]

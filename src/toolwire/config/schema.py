"""The shape of ``config.toml``: defaults, types, and one-line errors for a bad value.

``config.py`` decides precedence; this module only reads one TOML table at a time into
checked Python values. Every error names the file, the key and what to do.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from toolwire.backends.base import PROVIDERS, TOOL_FORMATS
from toolwire.errors import ToolwireError

MODES = ("ask", "accept-edits", "read-only")
PROFILES = ("minimal", "verbose", "full")
BACKEND_KEYS = (
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "tool_format",
    "cassette",
    "passthrough",
)
# How the proxy forwards a client's Messages body to an Anthropic backend (proxy/passthrough.py).
PASSTHROUGH_LEVELS = ("full", "core", "off")
TOP_KEYS = ("default_backend", "mode", "profile", "backends", "limits", "handoff", "proxy")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ConfigError(ToolwireError):
    """The configuration is invalid; the message is one line saying where and what to do."""


@dataclass(frozen=True, slots=True)
class Limits:
    """``[limits]``: how far one prompt may go and how long the network may take."""

    max_turn_requests: int = 50
    """Model requests in one prompt turn before it stops with ``max_turn_requests``."""
    max_tokens: int = 8192
    """Output tokens asked for per model request."""
    connect_timeout: float = 10.0
    """Seconds to connect to a backend."""
    read_timeout: float = 120.0
    """Seconds a backend may stay silent mid-response."""
    max_retries: int = 3
    """Retries of a 429 / 5xx / overloaded answer, before the first byte only."""
    command_timeout: float = 120.0
    """Default seconds a ``Bash`` command may run."""
    max_tool_output_chars: int = 30000
    """Characters of a tool's output sent to the model (cut head + tail beyond)."""
    max_live_output_chars: int = 4000
    """Characters of a running command's output tail shown in the editor per update."""


@dataclass(frozen=True, slots=True)
class HandoffConfig:
    """``[handoff]``: what a new backend receives after a switch (DESIGN.md)."""

    max_tool_context_chars: int = 40000
    """Budget for the verbatim, deduplicated tool context."""
    max_tool_result_chars: int = 2000
    """Cap per tool result in that context (head + tail kept)."""
    keep_last: int = 2
    """Most recent turns passed verbatim instead of summarized."""


#: The key a provider reads when it talks to its own service (no ``base_url``). Never
#: sent to another ``base_url``: that would hand the key to a third party.
DEFAULT_KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """One ``[backends.NAME]`` table."""

    name: str
    provider: str
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    tool_format: str = "native"
    cassette: str | None = None
    passthrough: str | None = None
    """``toolwire proxy`` only: ``full``, ``core`` or ``off`` (None: chosen by host)."""

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key, read from the named environment variable (None when unset)."""
        if self.api_key_env is None:
            return None
        return (os.environ if environ is None else environ).get(self.api_key_env) or None


def table(value: Any, where: str, key: str) -> dict[str, Any]:
    """``value`` as a TOML table, or an error naming ``key``."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key} must be a table ([{key}]); fix that section")
    return value


def check_keys(data: Mapping[str, Any], allowed: tuple[str, ...], where: str, section: str) -> None:
    """Unknown keys are errors (a typo would otherwise be silently ignored)."""
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(allowed)}"
            raise ConfigError(f"{where}: unknown key {key!r} in {section}; {hint}")


def string(
    data: Mapping[str, Any], key: str, where: str, choices: tuple[str, ...] = ()
) -> str | None:
    """An optional string value, checked against ``choices`` when given."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {key} must be a non-empty string")
    if choices and value not in choices:
        raise ConfigError(
            f"{where}: {key} = {value!r} is not valid; use one of {', '.join(choices)}"
        )
    return value


def api_key_env(data: Mapping[str, Any], where: str) -> str | None:
    """``api_key_env`` names a variable; a value shaped like a key is refused."""
    if "api_key" in data:
        raise ConfigError(
            f"{where}: do not put an API key in the config file; export it in an environment "
            'variable and name that variable with api_key_env = "NAME"'
        )
    name = string(data, "api_key_env", where)
    if name is not None and not _ENV_NAME.fullmatch(name):
        raise ConfigError(
            f"{where}: api_key_env must be the NAME of the environment variable holding the key "
            "(e.g. ANTHROPIC_API_KEY), not the key itself"
        )
    return name


def numbers(cls: type[Any], data: Mapping[str, Any], where: str, section: str) -> dict[str, Any]:
    """The fields of a ``Limits``-like dataclass present in ``data``, type-checked."""
    names = tuple(f.name for f in fields(cls))
    check_keys(data, names, where, f"[{section}]")
    out: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        want_int = f.type in (int, "int")
        ok = isinstance(value, int) if want_int else isinstance(value, int | float)
        if not ok or isinstance(value, bool) or value <= 0:
            kind = "a positive integer" if want_int else "a positive number"
            raise ConfigError(f"{where}: {section}.{f.name} must be {kind}, got {value!r}")
        out[f.name] = value if want_int else float(value)
    return out


def file_backends(raw: Any, file: Path, sources: dict[str, str]) -> dict[str, BackendConfig]:
    """The ``[backends.NAME]`` tables of ``file``; records their sources."""
    where = str(file)
    out: dict[str, BackendConfig] = {}
    for name, value in table(raw, where, "backends").items():
        data = table(value, where, f"backends.{name}")
        out[name] = _backend(name, data, file)
        sources.update({f"backends.{name}.{k}": where for k in BACKEND_KEYS if k in data})
    return out


def _backend(name: str, data: dict[str, Any], file: Path) -> BackendConfig:
    section = f"[backends.{name}]"
    here = f"{file} {section}"
    key_env = api_key_env(data, here)  # first: a key in the file deserves its own message
    check_keys(data, BACKEND_KEYS, str(file), section)
    provider = string(data, "provider", here, PROVIDERS)
    if provider is None:
        raise ConfigError(f"{here}: provider is missing; set it to one of {', '.join(PROVIDERS)}")
    model = string(data, "model", here) or ""
    if not model and provider != "replay":
        raise ConfigError(f'{here}: model is missing; set model = "..." (the provider\'s model id)')
    base_url = string(data, "base_url", here)
    cassette = string(data, "cassette", here)
    if provider == "replay":
        if cassette is None:
            raise ConfigError(f'{here}: a replay backend needs cassette = "PATH.jsonl"')
        cassette = str((file.parent / Path(cassette).expanduser()).resolve())
    if key_env is None and base_url is None:
        key_env = DEFAULT_KEY_ENV.get(provider)
    passthrough = string(data, "passthrough", here, PASSTHROUGH_LEVELS)
    if passthrough is not None and provider != "anthropic":
        raise ConfigError(f"{here}: passthrough applies to anthropic backends only; remove it here")
    return BackendConfig(
        name=name,
        provider=provider,
        model=model,
        base_url=base_url,
        api_key_env=key_env,
        tool_format=string(data, "tool_format", here, TOOL_FORMATS) or "native",
        cassette=cassette,
        passthrough=passthrough,
    )


def mask(secret: str) -> str:
    """A key shown without giving it away: ``sk-a…f3``; short keys show nothing."""
    if len(secret) < 12:
        return "…"
    return f"{secret[:4]}…{secret[-2:]}"


__all__ = [
    "BACKEND_KEYS",
    "DEFAULT_KEY_ENV",
    "MODES",
    "PASSTHROUGH_LEVELS",
    "PROFILES",
    "TOP_KEYS",
    "BackendConfig",
    "ConfigError",
    "HandoffConfig",
    "Limits",
    "api_key_env",
    "check_keys",
    "file_backends",
    "mask",
    "numbers",
    "string",
    "table",
]

"""The ``[proxy]`` table of ``config.toml``: only what ``toolwire proxy`` needs.

The backends themselves are the agent's ``[backends.NAME]`` tables (``load_config``);
this loader reads the one extra table, so ``config.py`` keeps its own schema::

    [proxy]
    default_backend = "glm"          # else the config's default backend
    token = "..."                    # clients must send it (x-api-key or Bearer)
    pass_client_key = false          # Anthropic backends: forward the client's x-api-key
    max_body_bytes = 33554432
    store = "memory"                 # or a SQLite file path, or "redis://host:6379/0"
    store_ttl = 0                    # Redis store: seconds an idle session is kept (0: forever)
    retries = 0                      # upstream retries (Claude Code retries on its own)

    [proxy.models]                   # request model name -> "backend" or "backend,model"
    "claude-opus-5-5" = "glm,glm-4.6"
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.config import Config, load_config
from toolwire.config.schema import ConfigError, check_keys
from toolwire.proxy.stores.redis import is_redis_url, require_redis

_KEYS = (
    "default_backend",
    "token",
    "pass_client_key",
    "max_body_bytes",
    "store",
    "store_ttl",
    "retries",
    "models",
)
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # Claude Code's long sessions reach several MB


@dataclass(frozen=True, slots=True)
class ProxySettings:
    """How the proxy routes, guards and limits requests (see the module doc)."""

    config: Config
    default_backend: str
    token: str | None = None
    pass_client_key: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY
    store: str = "memory"
    store_ttl: int = 0
    retries: int = 0
    models: Mapping[str, str] = field(default_factory=dict)


def load_settings(path: str | Path | None = None, **overrides: Any) -> ProxySettings:
    """The agent's configuration plus its ``[proxy]`` table; ``overrides`` win."""
    config = load_config(path)
    raw = _proxy_table(config.file) if config.file is not None and config.file_found else {}
    where = str(config.file)
    check_keys(raw, _KEYS, where, "[proxy]")
    models = raw.get("models", {})
    if not isinstance(models, dict) or not all(isinstance(v, str) for v in models.values()):
        raise ConfigError(f"{where}: [proxy.models] maps model names to 'backend[,model]'")
    values: dict[str, Any] = {
        "config": config,
        "default_backend": _string(raw, "default_backend", where) or config.default_backend,
        "token": _string(raw, "token", where),
        "pass_client_key": bool(raw.get("pass_client_key", False)),
        "max_body_bytes": _positive(raw, "max_body_bytes", where, DEFAULT_MAX_BODY),
        "store": _string(raw, "store", where) or "memory",
        "store_ttl": _count(raw, "store_ttl", where),
        "retries": _count(raw, "retries", where),
        "models": dict(models),
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = ProxySettings(**values)
    _check_store(settings, where)
    config.backend(settings.default_backend)  # an unknown default fails now, in plain words
    return settings


def _check_store(settings: ProxySettings, where: str) -> None:
    """A Redis store needs the optional ``redis`` package; ``store_ttl`` needs Redis."""
    if is_redis_url(settings.store):
        require_redis()  # a ConfigError with the install line, before serving
    elif settings.store_ttl:
        raise ConfigError(f"{where}: [proxy] store_ttl needs a redis:// store")


def _proxy_table(file: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{file}: cannot read: {e}") from e
    table = data.get("proxy", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: proxy must be a table ([proxy])")
    return table


def _string(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: [proxy] {key} must be a string")
    return value


def _count(raw: Mapping[str, Any], key: str, where: str) -> int:
    value = raw.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{where}: [proxy] {key} must be an integer >= 0")
    return value


def _positive(raw: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = raw.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where}: [proxy] {key} must be a positive integer")
    return value


__all__ = ["DEFAULT_MAX_BODY", "ProxySettings", "load_settings"]

"""Build a backend from its configuration (``[backends.NAME]``)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

import httpx2

from toolwire.backends.base import HTTPSettings, TappableBackend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.record import RecordingBackend
from toolwire.backends.replay import ReplayBackend
from toolwire.config.schema import BackendConfig, ConfigError, LimitsConfig
from toolwire.providers import PROFILES


def backend_class(provider: str) -> type[HTTPBackend]:
    """The ``HTTPBackend`` subclass the profile of ``provider`` names (imported now)."""
    return _imported_class(PROFILES[provider].backend)


@cache
def _imported_class(path: str) -> type[HTTPBackend]:
    """``module:name``, imported and checked once (the proxy makes a backend per request)."""
    module, _, name = path.partition(":")
    found = getattr(importlib.import_module(module), name)
    if not (isinstance(found, type) and issubclass(found, HTTPBackend)):
        raise TypeError(f"{path} is not an HTTPBackend")
    return found


def create_backend(
    config: BackendConfig,
    limits: LimitsConfig | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    record: str | Path | None = None,
    http_class: Callable[..., HTTPBackend] | None = None,
    client: httpx2.AsyncClient | None = None,
) -> TappableBackend:
    """The backend ``config`` describes; with ``record``, wrapped to write a cassette.

    ``http_class`` builds the backend instead of the provider's class (a subclass of it,
    e.g. the proxy's pass-through bound to the body it sends). ``client`` is the HTTP
    client to send with (``http_client()``; the caller closes it); without one, an HTTP
    backend opens a private client per response.

    Raises ``ConfigError`` when the backend's key variable is named but not set (say so
    now, in plain words, rather than as a 401 later).
    """
    env = os.environ if environ is None else environ
    key = config.api_key(env)
    backend: TappableBackend
    if config.provider == "replay":
        if not config.cassette:
            raise ConfigError(f"backend {config.name!r}: a replay backend needs a cassette")
        backend = ReplayBackend(
            name=config.name,
            cassette=config.cassette,
            tool_format=config.tool_format,
            model=config.model,
            rescue=config.rescue_mode == "auto",
        )
    else:
        backend = _http_backend(config, limits or LimitsConfig(), key, http_class, client)
    if record is not None:
        return RecordingBackend(backend, record, secrets=[key])
    return backend


def _http_backend(
    config: BackendConfig,
    limits: LimitsConfig,
    key: str | None,
    cls: Callable[..., HTTPBackend] | None,
    client: httpx2.AsyncClient | None,
) -> HTTPBackend:
    if config.api_key_env and not key:
        raise ConfigError(
            f"backend {config.name!r} needs an API key: ${config.api_key_env} is not set; "
            "export it, or choose another backend with --backend"
        )
    settings = HTTPSettings.from_config(limits)
    return (cls or backend_class(config.provider))(
        name=config.name,
        model=config.model,
        api_key=key,
        api_key_env=config.api_key_env,
        base_url=config.base_url,
        tool_format=config.tool_format,
        settings=settings,
        client=client,
        vision=config.vision,
        rescue=config.rescue_mode == "auto",
    )


__all__ = ["backend_class", "create_backend"]

"""``providers/list``, ``providers/set``, ``providers/disable`` (ACP, unstable): the editor
points toolwire's backends at endpoints and keys of its own.

A provider is a backend (its id the backend's name): the configured ones, and the
providers toolwire knows by name (``anthropic``, ``openai``, ``gemini``) for an editor
that brings its own key. ``providers/set`` replaces the backend's endpoint, protocol and
key for this process only; a session that uses it switches at its next prompt with the
handoff, as after a model switch (``features.switch``), since the endpoint may serve
another model. ``providers/disable`` takes a backend out: sessions on it move to the
default backend at their next prompt; the default itself is ``required``.

The key arrives in the request's ``headers`` (``x-api-key``, ``api-key``,
``x-goog-api-key`` or ``authorization: Bearer``). It is held in memory under a variable
name of its own (``toolwire.config.keys.hold_key``), which is all the backend's table
and everything derived from it carry: it is never answered, logged or stored. Other
headers are not sent on (logged by name).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable
from typing import Any, Final

from acp.exceptions import RequestError

from toolwire.agent.features.slash import Slash
from toolwire.agent.session.state import Runtime, Session
from toolwire.config import Config
from toolwire.config.keys import hold_key
from toolwire.config.load import DETECTED
from toolwire.config.schema import BackendConfig
from toolwire.providers import PROFILES
from toolwire.secrets import mask_urls

log = logging.getLogger("toolwire.agent")

#: toolwire's provider -> the ACP ``LlmProtocol`` it speaks (its profile's).
PROTOCOLS: Final = {name: p.acp_protocol for name, p in PROFILES.items()}
#: Each provider's own service, where ``base_url`` is unset (its profile's).
DEFAULT_URLS: Final = {name: p.default_url for name, p in PROFILES.items()}
_KEY_HEADERS: Final = ("x-api-key", "api-key", "x-goog-api-key")
_BEARER = re.compile(r"(?i)bearer\s+(\S+)")


class Providers:
    """The providers of one connection: which are disabled (module doc)."""

    def __init__(self) -> None:
        self.disabled: set[str] = set()

    def list(self, config: Config) -> dict[str, Any]:
        """The ``providers/list`` answer: no key, no credential in a URL."""
        out = []
        for name, backend in _candidates(config).items():
            info: dict[str, Any] = {
                "providerId": name,
                "supported": sorted(set(PROTOCOLS.values())),
                "required": name == config.default_backend,
            }
            if name in config.backends and name not in self.disabled:
                url = backend.base_url or DEFAULT_URLS[backend.provider]
                info["current"] = {
                    "apiType": PROTOCOLS[backend.provider],
                    "baseUrl": mask_urls(url),
                }
            out.append(info)
        return {"providers": out}

    def set(self, config: Config, params: dict[str, Any]) -> Config:
        """``providers/set``: the configuration with the backend replaced."""
        name, api_type, base_url = (params.get(k) for k in ("providerId", "apiType", "baseUrl"))
        if not (isinstance(name, str) and isinstance(api_type, str) and isinstance(base_url, str)):
            raise RequestError.invalid_params({"params": "providerId, apiType, baseUrl"})
        known = _candidates(config)
        if name not in known:
            raise RequestError.invalid_params(
                {"providerId": f"no provider {name!r}; providers/list names them"}
            )
        old = known[name]
        provider = _provider(api_type, old.provider, base_url)
        headers = params.get("headers")
        key = _key(headers if isinstance(headers, dict) else {})
        variable = _variable(name)
        hold_key(variable, key)
        new = BackendConfig(
            **{
                **old.model_dump(exclude={"name", "provider", "base_url", "api_key_env"}),
                "name": name,
                "provider": provider,
                "base_url": base_url.rstrip("/"),
                "api_key_env": variable if key else None,
            }
        )
        self.disabled.discard(name)
        log.info("provider %s set to %s at %s", name, provider, mask_urls(base_url))
        return dataclasses.replace(config, backends={**config.backends, name: new})

    def disable(self, config: Config, params: dict[str, Any]) -> str:
        """``providers/disable``: the name of the backend taken out."""
        name = params.get("providerId")
        if not isinstance(name, str) or name not in _candidates(config):
            raise RequestError.invalid_params({"providerId": f"no provider {name!r}"})
        if name == config.default_backend:
            raise RequestError.invalid_params(
                {"providerId": f"{name} is the default backend (required)"}
            )
        self.disabled.add(name)
        hold_key(_variable(name), None)
        return name


def rerouted(sessions: Iterable[Session], name: str) -> None:
    """Sessions answered by backend ``name`` switch to its new endpoint at their next
    prompt (the handoff); its next request is made anew."""
    for session in sessions:
        if session.model.active == name:
            session.model.reroute()


async def moved_off(sessions: Iterable[Session], runtime: Runtime, name: str) -> None:
    """Sessions on (or about to switch to) backend ``name`` go to the default backend at
    their next prompt."""
    default = runtime.config.default_backend
    for session in sessions:
        if name in (session.model.active, session.model.pending):
            await Slash(session, runtime).choose_model(default)


def _candidates(config: Config) -> dict[str, BackendConfig]:
    """The backends an editor may set: configured ones that speak HTTP, and the known
    providers by name (their usual model)."""
    out = {n: b for n, b in config.backends.items() if b.provider in PROTOCOLS}
    for name, provider, model, variables in DETECTED:
        out.setdefault(
            name, BackendConfig(name=name, provider=provider, model=model, api_key_env=variables[0])
        )
    return out


def _provider(api_type: str, current: str, base_url: str) -> str:
    """toolwire's provider for ``api_type``. An OpenAI-compatible endpoint other than
    OpenAI's own speaks Chat Completions far more often than the Responses API."""
    if api_type == "anthropic":
        return "anthropic"
    if api_type == "openai":
        official = base_url.startswith(DEFAULT_URLS["openai-chat"])
        return current if official and current.startswith("openai") else "openai-chat"
    if api_type == "gemini":
        return "gemini"
    raise RequestError.invalid_params(
        {"apiType": f"{api_type!r} is not spoken here; use anthropic, openai or gemini"}
    )


def _key(headers: dict[str, Any]) -> str | None:
    """The key among ``headers`` (any case); the other headers are named in the log."""
    lowered = {str(k).lower(): v for k, v in headers.items() if isinstance(v, str)}
    ignored = sorted(set(lowered) - {*_KEY_HEADERS, "authorization"})
    if ignored:
        log.info("providers/set: headers not sent on: %s", ", ".join(ignored))
    for header in _KEY_HEADERS:
        if lowered.get(header):
            return lowered[header]
    bearer = _BEARER.fullmatch(lowered.get("authorization", "").strip())
    return bearer.group(1) if bearer else None


def _variable(name: str) -> str:
    """The variable name the editor's key is held under (never a real variable)."""
    return "TOOLWIRE_EDITOR_KEY_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


__all__ = ["DEFAULT_URLS", "PROTOCOLS", "Providers", "moved_off", "rerouted"]

"""Which backend and model a request goes to (docs/proxy.md, "Routing and sessions").

In order: an explicit ``backend,model`` (or a bare backend name) in the request's
``model`` (what Claude Code's ``/model`` sends), or a ``[proxy.aliases]`` id (what its
model picker lists); the backend the session was switched to with ``toolwire proxy
switch``; the first ``[[proxy.routes]]`` rule the request meets (``rules.py``); the
``[proxy.models]`` map; the default backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.proxy.rules import choose
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState


@dataclass(frozen=True, slots=True)
class Route:
    """The chosen backend (a ``[backends.NAME]`` name), its model, and why."""

    backend: str
    model: str
    reason: str


def route(
    requested: str,
    state: SessionState,
    settings: ProxySettings,
    *,
    body: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Route:
    """Route a request whose ``model`` field is ``requested``; the rules read its
    ``body`` and ``headers`` (without a body, no rule applies)."""
    explicit = _explicit(requested, settings)
    if explicit is not None:
        return Route(*explicit, "explicit")
    alias = settings.aliases.get(requested)
    if alias is not None:
        return _mapped(alias, "alias", settings)
    if state.forced is not None:
        return Route(state.forced, _model(state.forced, None, settings), "switched")
    rule = None if body is None else choose(settings.routes, body, headers or {})
    if rule is not None:
        return Route(rule.backend, _model(rule.backend, rule.model, settings), "rule")
    mapped = settings.models.get(requested)
    if mapped is not None:
        return _mapped(mapped, "mapped", settings)
    name = settings.default_backend
    return Route(name, _model(name, None, settings), "default")


def _mapped(target: str, reason: str, settings: ProxySettings) -> Route:
    name, _, model = target.partition(",")
    return Route(name, _model(name, model or None, settings), reason)


def _explicit(requested: str, settings: ProxySettings) -> tuple[str, str] | None:
    backends = settings.config.backends
    name, comma, model = requested.partition(",")
    if name not in backends:
        # "x,y" always means backend x: an unknown x is the client's mistake (a 400).
        return (name, model) if comma else None
    return name, _model(name, model or None, settings)


def _model(backend: str, model: str | None, settings: ProxySettings) -> str:
    return model or settings.config.backend(backend).model


def named_models(settings: ProxySettings) -> dict[str, frozenset[str]]:
    """Per backend, the models the config gives it (its own, ``[proxy.models]``,
    ``[proxy.aliases]``, ``[[proxy.routes]]``): the models a key's ``--models`` patterns
    may name, as opposed to whatever a client writes after a comma."""
    pairs = [(name, b.model) for name, b in settings.config.backends.items()]
    for target in (*settings.models.values(), *settings.aliases.values()):
        name, _, model = target.partition(",")
        pairs.append((name, model))
    pairs += [(rule.backend, rule.model or "") for rule in settings.routes]
    found: dict[str, set[str]] = {}
    for name, model in pairs:
        if name in settings.config.backends:
            found.setdefault(name, set()).add(model or settings.config.backend(name).model)
    return {name: frozenset(models) for name, models in found.items()}


__all__ = ["Route", "named_models", "route"]

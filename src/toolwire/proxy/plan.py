"""One request's plan: its session, route, rewritten history, upstream body and relay.

The session's state is read and written in one atomic ``update`` (two proxy processes
on one Redis or SQLite store cannot lose each other's switch or summary), and the same
plan serves ``/v1/messages`` and ``count_tokens``, so tokens are counted over exactly
what would be sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from toolwire.backends.anthropic import build_body as anthropic_body
from toolwire.backends.base import ModelRequest, TappableBackend
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.passthrough import Prepared, default_level, prepare
from toolwire.proxy.provenance import turn_owner
from toolwire.proxy.raw_relay import RawRelay
from toolwire.proxy.relay import Relay, TranslatedRelay
from toolwire.proxy.rewrite import View, rewrite
from toolwire.proxy.routing import Route, route
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState, session_id
from toolwire.proxy.stores import ProxyStore
from toolwire.proxy.translate import import_history, parse_request, raw_index, to_model_request
from toolwire.proxy.upstream import estimate_tokens, make_backend


@dataclass(frozen=True, slots=True)
class Plan:
    """Where a request goes, what is sent there, and how the answer comes back.

    ``passthrough``: the client's body as prepared for an Anthropic backend (None: the
    request is translated); ``input_tokens``: the estimate of what is sent.
    """

    session: str
    route: Route
    backend: TappableBackend
    request: ModelRequest
    passthrough: Prepared | None
    switched: bool
    input_tokens: int
    relay: Relay


def plan(
    body: Any,
    headers: Mapping[str, str],
    settings: ProxySettings,
    store: ProxyStore,
    *,
    record: bool = True,
    client: httpx2.AsyncClient | None = None,
) -> Plan:
    """The plan of a request; with ``record``, the session's state is updated with it.

    ``client``: the HTTP client the backend sends with (the proxy's)."""
    body = parse_request(body)
    sid = session_id(body, headers)
    history = import_history(body)

    def decide(state: SessionState) -> tuple[Route, View, bool, dict[str, str]]:
        chosen = route(body["model"], state, settings)
        if chosen.backend not in settings.config.backends:
            raise BadRequestError(
                f"model {body['model']!r} routes to unknown backend {chosen.backend!r}"
            )
        switched = record and state.record(chosen.backend, len(history))
        view, _ = rewrite(history, state, chosen.backend, settings.config.handoff)
        return chosen, view, switched, dict(state.produced)

    if record:
        chosen, view, switched, produced = store.update(sid, decide)
    else:
        chosen, view, switched, produced = decide(store.load(sid))
    level = passthrough_level(settings, chosen.backend)
    prepared = None
    if level != "off":
        prepared = _passthrough(body, headers, chosen, view, level, produced)
    # A pass-through relays the upstream's own bytes; anything else is encoded back.
    raw = None if prepared is None else RawRelay()
    key = headers.get("x-api-key") or None
    attach = None if raw is None else raw.attach
    backend = make_backend(chosen, settings, key, prepared=prepared, attach=attach, client=client)
    request = to_model_request(body, view.messages)
    tokens = estimate_tokens(backend, request)
    relay: Relay = raw or _translated(settings, chosen, str(body["model"]), tokens)
    return Plan(sid, chosen, backend, request, prepared, switched, tokens, relay)


def passthrough_level(settings: ProxySettings, name: str) -> str:
    """``full``, ``core`` or ``off`` for backend ``name`` (``off`` unless Anthropic)."""
    config = settings.config.backend(name)
    if config.provider != "anthropic" or config.tool_format != "native":
        return "off"
    return config.passthrough or default_level(config.base_url)


def _translated(settings: ProxySettings, chosen: Route, model: str, tokens: int) -> Relay:
    """A relay that encodes the backend's events back into Anthropic's stream."""
    json_args = settings.config.backend(chosen.backend).tool_format == "native"
    return TranslatedRelay(model, input_tokens=tokens, json_args=json_args)


def _passthrough(
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    chosen: Route,
    view: View,
    level: str,
    produced: Mapping[str, str],
) -> Prepared:
    start = raw_index(body, view.start) if view.prefix else 0
    prefix_messages = view.prefix
    if start is None:  # the switch point is not a message boundary: send it all rebuilt
        prefix_messages, start = view.messages, len(body["messages"])
    prefix: list[dict[str, Any]] = []
    if prefix_messages:
        neutral = to_model_request(body, prefix_messages)
        prefix = anthropic_body(neutral, model=chosen.model, backend=chosen.backend)["messages"]
    return prepare(
        body,
        level=level,
        model=chosen.model,
        target=chosen.backend,
        owner=lambda content: turn_owner(content, produced),
        headers=headers,
        prefix=prefix,
        start=start,
    )


__all__ = ["Plan", "passthrough_level", "plan"]

"""One request's plan: its session, route, rewritten history, upstream body and relay.

A request over its backend's window is compacted here (``compaction.py``) and the usage
its answer reports is scaled to the client's window (``scale.py``).

The session's state is read and written in one atomic ``update`` (two proxy processes
on one Redis or SQLite store cannot lose each other's switch or summary), and the same
plan serves ``/v1/messages`` and ``count_tokens``, so tokens are counted over exactly
what would be sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import httpx2

from toolwire.backends.base import ModelRequest, TappableBackend
from toolwire.config.choices import PassthroughLevel
from toolwire.context import Budget, Window, estimate_request
from toolwire.conversation import ConversationRecord
from toolwire.history import Message
from toolwire.proxy.compaction import (
    compact,
    compacted_view,
    continued,
    route_window,
    too_long,
)
from toolwire.proxy.dialects.base import Imported
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.forward import passthrough_body, passthrough_level
from toolwire.proxy.passthrough import Prepared
from toolwire.proxy.raw_relay import RawRelay
from toolwire.proxy.relay import Answering, Relay, TranslatedRelay
from toolwire.proxy.rewrite import View, rewrite
from toolwire.proxy.routing import Route, route
from toolwire.proxy.scale import Scale, client_window, scale_for
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState, owned_session, session_id
from toolwire.proxy.stores import ProxyStore
from toolwire.proxy.translate import import_history, parse_request, to_model_request
from toolwire.proxy.upstream import estimate_tokens, make_backend

KeyChoice = Callable[[str, str], str | None]
"""(backend, session) -> the variable of the key the request sends with."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Where a request goes, what is sent there, and how the answer comes back.

    ``passthrough``: the client's body as prepared for an Anthropic backend (None: the
    request is translated); ``input_tokens``: the estimate of what is sent (as the
    backend counts, unscaled); ``scale``: how input tokens are reported to the client
    (None: as they are); ``compacted``: the history went as the proxy's compaction of it,
    ``compacted_now``: that compaction was made for this request.
    """

    session: str
    route: Route
    backend: TappableBackend
    request: ModelRequest
    passthrough: Prepared | None
    switched: bool
    input_tokens: int
    relay: Relay
    scale: Scale | None = None
    compacted: bool = False
    compacted_now: bool = False
    before: Before | None = None
    """The session's routing record before this plan changed it (a failover undoes it)."""
    failover: Failover | None = None
    """The failover this plan was made for (None: the routed backend)."""
    key_env: str | None = None
    """The variable of the pool key this plan sends with (None: no pool; ``pools.py``)."""

    @property
    def reported_tokens(self) -> int:
        """``input_tokens`` as the client is told (``count_tokens``)."""
        return self.input_tokens if self.scale is None else self.scale(self.input_tokens)


@dataclass(frozen=True, slots=True)
class Before:
    """The last backend and the switch point before a plan recorded itself."""

    last_backend: str | None
    conversation: ConversationRecord


@dataclass(frozen=True, slots=True)
class Failover:
    """A request sent on to ``backend`` after ``failed`` (its plan) failed before its
    first byte; ``sticky``: the session is switched to ``backend``."""

    backend: str
    failed: Plan
    sticky: bool = False


@dataclass(frozen=True, slots=True)
class _Request:
    """One request's inputs, as every step of its plan reads them."""

    body: Mapping[str, Any]
    headers: Mapping[str, str]
    settings: ProxySettings
    client: httpx2.AsyncClient | None
    session: str
    history: tuple[Message, ...]
    client_window: int
    failover: Failover | None = None
    choose_key: KeyChoice | None = None
    imported: Imported | None = None
    """The request of another dialect this one was read from (None: Anthropic's)."""


@dataclass(frozen=True, slots=True)
class _Decision:
    """What the session's state decided: the route, the view to send, the window."""

    chosen: Route
    view: View
    switched: bool
    produced: dict[str, str]
    level: PassthroughLevel
    window: Window
    compacted: bool
    before: Before


@dataclass(frozen=True, slots=True)
class _Built:
    """The upstream request of a view, and its estimate."""

    prepared: Prepared | None
    raw: RawRelay | None
    backend: TappableBackend
    request: ModelRequest
    tokens: int
    key_env: str | None = None


def plan(
    body: Any,
    headers: Mapping[str, str],
    settings: ProxySettings,
    store: ProxyStore,
    *,
    record: bool = True,
    client: httpx2.AsyncClient | None = None,
    squeeze: float | None = None,
    failover: Failover | None = None,
    choose_key: KeyChoice | None = None,
    owner: str | None = None,
    imported: Imported | None = None,
) -> Plan:
    """The plan of a request; with ``record``, the session's state is updated with it.

    ``client``: the HTTP client the backend sends with (the proxy's). A request over its
    backend's window is compacted (``compaction.py``), or refused if that is off; a
    ``count_tokens`` plan (no ``record``) only counts. ``squeeze``: compact whatever the
    estimate says, into that share of the usual budget (the upstream refused the
    request as too long though the estimate said it fits). ``failover``: the route is that
    backend, and the record the failed plan made is undone first (so a switch, if any, is
    from the backend that produced the history, not from the one that failed).
    ``choose_key``: (backend, session) -> the pool key's variable (``pools.py``).
    ``owner``: the person whose session it is (``state.owned_session``; None: no person).
    ``imported``: the request read from another dialect (``dialects``; ``body`` is then
    its Anthropic form): it answers through the dialect's relay, never passed through."""
    r = _read(body, headers, settings, client, failover, choose_key, owner, imported)
    decide = partial(_decide, r, record=record)
    d = store.update(r.session, decide) if record else decide(store.load(r.session))
    built, now = _fit(r, d, store, record=record, squeeze=squeeze)
    return _assembled(r, d, built, compacted_now=now, failover=failover)


def _assembled(
    r: _Request, d: _Decision, built: _Built, *, compacted_now: bool, failover: Failover | None
) -> Plan:
    """The plan of what was decided and built, with its relay."""
    relay, scale = _relay(r, d, built)
    return Plan(
        r.session,
        d.chosen,
        built.backend,
        built.request,
        built.prepared,
        d.switched,
        built.tokens,
        relay,
        scale,
        compacted=d.compacted or compacted_now,
        compacted_now=compacted_now,
        before=d.before,
        failover=failover,
        key_env=built.key_env,
    )


def _read(
    raw: Any,
    headers: Mapping[str, str],
    settings: ProxySettings,
    client: httpx2.AsyncClient | None,
    failover: Failover | None,
    choose_key: KeyChoice | None = None,
    owner: str | None = None,
    imported: Imported | None = None,
) -> _Request:
    """The request's inputs: its body checked, its session (its store key: the owner's),
    history and client window."""
    body = parse_request(raw)
    neutral = None if imported is None else imported.request
    history = import_history(body) if neutral is None else neutral.messages
    sid = owned_session(session_id(body, headers), owner)
    window = client_window(str(body["model"]), headers)
    return _Request(
        body, headers, settings, client, sid, history, window, failover, choose_key, imported
    )


def _decide(r: _Request, state: SessionState, *, record: bool) -> _Decision:
    """Route, record, and the view to send: the session's compaction if the history
    continues it, else the switch rewrite (``rewrite.py``)."""
    settings, history = r.settings, r.history
    if r.failover is None:
        chosen = route(r.body["model"], state, settings, body=r.body, headers=r.headers)
    else:
        chosen = _failover(r.failover, state, settings, record=record)
    before = Before(state.last_backend, state.conversation)
    if chosen.backend not in settings.config.backends:
        raise BadRequestError(
            f"model {r.body['model']!r} routes to unknown backend {chosen.backend!r}"
        )
    switched = record and state.record(chosen.backend, len(history))
    # The pass-through relays an Anthropic upstream's bytes: for Anthropic clients only.
    level = "off" if r.imported else passthrough_level(settings, chosen.backend)
    window = route_window(settings, chosen, level=level, client=r.client_window)
    produced = dict(state.produced)
    point = continued(state, chosen.backend, history) if settings.compaction else None
    if point is None:
        view, _ = rewrite(history, state, chosen.backend, settings.config.handoff)
    else:
        view = compacted_view(history, point, target=chosen.backend, produced=produced)
    return _Decision(chosen, view, switched, produced, level, window, point is not None, before)


def _failover(f: Failover, state: SessionState, settings: ProxySettings, *, record: bool) -> Route:
    """The route to the fallback; with ``record``, the failed plan's record undone."""
    undo = f.failed.before
    if record and undo is not None and state.last_backend == f.failed.route.backend:
        state.last_backend = undo.last_backend
        state.conversation = undo.conversation
    if record and f.sticky:
        state.forced = f.backend
    return Route(f.backend, settings.config.backend(f.backend).model, "failover")


def _fit(
    r: _Request, d: _Decision, store: ProxyStore, *, record: bool, squeeze: float | None
) -> tuple[_Built, bool]:
    """The request built from the decided view, or, when that is over the window, from
    a new compaction (recorded with ``record``); True when compacted here.

    Over the window with compaction off: a ``/v1/messages`` request is refused with
    Anthropic's "prompt is too long"; ``count_tokens`` just counts it.
    """
    built = _build(r, d, d.view)
    fits = built.tokens <= d.window.room and squeeze is None
    if fits or not (r.settings.compaction or record):
        return built, False
    if not r.settings.compaction:
        raise too_long(built.tokens, d.window, d.chosen.backend)
    history, target = r.history, d.chosen.backend
    fixed = estimate_request(built.request.system, (), built.request.tools)
    budget = Budget(d.window, fixed, squeeze=squeeze or 1.0)
    point = compact(history, budget, target=target)
    if record:
        store.update(r.session, partial(_compacted, target, point))
    view = compacted_view(history, point, target=target, produced=d.produced)
    return _build(r, d, view), True


def _build(r: _Request, d: _Decision, view: View) -> _Built:
    """The upstream request for ``view``: the prepared body, the backend, the estimate."""
    prepared = None
    if d.level != "off":
        prepared = passthrough_body(r.body, r.headers, d.chosen, view, d.level, d.produced)
    # A pass-through relays the upstream's own bytes; anything else is encoded back.
    raw = None if prepared is None else RawRelay()
    key = r.headers.get("x-api-key") or None
    attach = None if raw is None else raw.attach
    env = None if r.choose_key is None else r.choose_key(d.chosen.backend, r.session)
    backend = make_backend(
        d.chosen, r.settings, key, prepared=prepared, attach=attach, client=r.client, key_env=env
    )
    search = None if prepared is not None else r.settings.search is not None
    neutral = None if r.imported is None else r.imported.request
    if neutral is None:
        request = to_model_request(r.body, view.messages, search=search)
    else:
        request = replace(neutral, messages=tuple(view.messages))
    return _Built(prepared, raw, backend, request, estimate_tokens(backend, request), env)


def _compacted(backend: str, point: ConversationRecord, state: SessionState) -> None:
    state.compactions[backend] = point


def _relay(r: _Request, d: _Decision, built: _Built) -> tuple[Relay, Scale | None]:
    """What streams the answer back (the raw relay, or an encoding into the client's
    dialect: Anthropic's or another's), and the usage scale from the backend's window
    to the client's."""
    scale = scale_for(r.client_window, d.window) if r.settings.scale_usage else None
    if built.raw is not None:
        built.raw.scale = scale
        return built.raw, scale
    json_args = r.settings.config.backend(d.chosen.backend).native_tools
    model, wire = str(r.body["model"]), built.backend.wire_format
    if r.imported is not None:
        return r.imported.relay(Answering(model, built.tokens, json_args, scale, wire)), scale
    tokens = built.tokens
    return TranslatedRelay(model, input_tokens=tokens, json_args=json_args, scale=scale), scale


__all__ = ["Before", "Failover", "KeyChoice", "Plan", "passthrough_level", "plan"]

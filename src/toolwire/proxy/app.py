"""The proxy's ASGI app (Starlette): the Anthropic Messages API in front of any backend.

Routes: ``POST /v1/messages`` (streamed or not), ``POST /v1/messages/count_tokens``,
``GET /v1/models``, ``GET /healthz``, ``GET /metrics``, the control endpoint
``POST /control/switch`` that ``toolwire proxy switch`` calls, and every route of the
other dialects (``proxy.dialects``: OpenAI Chat Completions and Responses, Gemini),
served by the same plan and relay. Every error is answered in the client's dialect's
shape with a one-line message (refusals.py); keys never appear in one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as Endpoint

from toolwire.backends import http_client
from toolwire.context import is_context_overflow
from toolwire.proxy.dialects import Imported, Keeper, dialect_routes
from toolwire.proxy.endpoints import Endpoints
from toolwire.proxy.errors import ProxyError, UpstreamError
from toolwire.proxy.failover import chain
from toolwire.proxy.intake import Intake
from toolwire.proxy.latencies import upstream_timing
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.operator import operator_middleware, operator_routes
from toolwire.proxy.people import Caller, People, metered
from toolwire.proxy.plan import Failover, Plan, plan
from toolwire.proxy.pools import open_pooled
from toolwire.proxy.provenance import watched
from toolwire.proxy.refusals import Refusals
from toolwire.proxy.relay import json_bytes
from toolwire.proxy.routing import named_models
from toolwire.proxy.searching import search_run, searched
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.sharing import Sharing
from toolwire.proxy.state import SessionState, client_session
from toolwire.proxy.stores import ProxyStore, open_store
from toolwire.proxy.telemetry import Person, Telemetry, traced
from toolwire.proxy.turns import taking_turns
from toolwire.proxy.upstream import Opened, open_stream
from toolwire.proxy.walk import walk
from toolwire.web import SearchSettings

_T = TypeVar("_T")
# A request the upstream refused as too long is compacted into this share of the usual
# budget and sent once more (as the agent recovers: toolwire.context).
RETRY_SQUEEZE = 0.6


class Proxy:
    """The proxy's state (settings, session store, metrics, the upstream HTTP client) and
    its request handlers. The client lives as long as the app (its lifespan); without a
    lifespan each upstream response gets a private one."""

    def __init__(
        self,
        settings: ProxySettings,
        store: ProxyStore | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.settings = settings
        self.client: httpx2.AsyncClient | None = None
        if store is None:
            store = open_store(settings.store, settings.store_ttl or None)
        self.store: ProxyStore = store
        self.metrics = Metrics()
        self.sharing = Sharing(settings, self.metrics)
        self.cooldowns, self.pools = self.sharing.cooldowns, self.sharing.pools
        prices = {name: b.price_per_mtok for name, b in settings.config.backends.items()}
        self.people = People.open(
            settings.store,
            settings.ledger,
            prices.get,
            self.metrics,
            spool=settings.ledger_spool,
            memory_rows=settings.ledger_memory_rows,
        )
        self.people.named = named_models(settings)
        self._fallbacks = {n: b.fallbacks for n, b in settings.config.backends.items()}
        self.telemetry = Telemetry.from_env() if telemetry is None else telemetry
        self.intake = Intake(settings, self.people)
        self.endpoints = Endpoints(settings, self.metrics, self.intake, self._update)

    def app(self) -> Starlette:
        """The ASGI application."""
        small = self.endpoints  # the routes that neither plan nor open (endpoints.py)
        return Starlette(
            routes=[
                Endpoint("/v1/messages", self.messages, methods=["POST"]),
                Endpoint("/v1/messages/count_tokens", self.count_tokens, methods=["POST"]),
                Endpoint("/v1/models", small.models, methods=["GET"]),
                Endpoint("/healthz", small.healthz, methods=["GET"]),
                Endpoint("/metrics", small.render_metrics, methods=["GET"]),
                Endpoint("/control/switch", small.switch, methods=["POST"]),
                *dialect_routes(self),
                *operator_routes(self.intake, self.cooldowns),  # the admin API and /ui
            ],
            middleware=[*operator_middleware(self.intake, self.metrics), taking_turns()],
            lifespan=self._lifespan,
            exception_handlers=Refusals(self.metrics).handlers(),
        )

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        async with http_client() as self.client:
            yield
        self.client = None
        if self.telemetry is not None:
            self.telemetry.close()
        self.sharing.close()
        # Settlements and ledger rows still queued are written before the process ends.
        await asyncio.to_thread(self.people.close)

    # -- endpoints ----------------------------------------------------------------------

    async def messages(self, request: Request) -> Response:
        """``POST /v1/messages``: route, translate (or pass through), relay."""
        return await self._serve(await self.intake.body(request), request)

    async def serve(self, imported: Imported, request: Request) -> Response:
        """A request of another dialect (``dialects``), served as ``/v1/messages``."""
        request.state.imported = imported
        return await self._serve(imported.body, request)

    async def count(self, imported: Imported, request: Request) -> int:
        """The input tokens of another dialect's request as its backend would be sent
        it (unscaled: ``scale_usage`` is for Claude Code's window)."""
        request.state.imported = imported
        return (await self._plan(imported.body, request, record=False)).input_tokens

    async def _serve(self, body: Any, request: Request) -> Response:
        try:
            return await self._messages(body, request)
        finally:
            # Cooldowns this request started reach the other replicas before it answers.
            await self.sharing.push()

    @property
    def keeper(self) -> Keeper:
        """The dialects' own records in the session store (``dialects.Keeper``)."""
        return Keeper(self.store, self._with_store)

    async def _messages(self, body: Any, request: Request) -> Response:
        p = await self._plan(body, request, record=True)
        caller: Caller | None = request.state.caller
        await self.sharing.admit(
            request.headers, p.input_tokens, None if caller is None else caller.limited
        )
        names = self.people.permitted(caller, self._chain(p))
        tokens = (p.input_tokens, p.request.max_tokens)
        sid = client_session(p.session)  # the id the client sent, not its owner's store key
        hold = await self.people.admit(caller, sid, names, tokens)
        who = self.person(request)
        span = (
            None
            if self.telemetry is None
            else self.telemetry.begin(traced(self.settings, body, p.route, who))
        )
        try:
            p, opened = await self._send(body, request, p, names)
        except BaseException as e:
            if hold is not None:  # nothing reached the client: nothing is charged
                status = f"error {e.status}" if isinstance(e, UpstreamError) else "error"
                hold.finish(p.route.backend, p.route.model, None, status, 0)
            if span is not None and self.telemetry is not None:
                self.telemetry.failed(span, e.kind if isinstance(e, ProxyError) else "crash")
            raise
        run = None if p.passthrough else search_run(body, p.request, p.backend, *self._web)
        if run is not None:  # the model's web_search calls run here (searching.py)
            opened = await searched(opened, run)
        if hold is not None:
            settle = partial(hold.settle, p.route.backend, p.route.model, p.backend.wire_format)
            opened.rest = metered(opened.rest, opened.first, settle)
        streamed = bool(body.get("stream"))
        self._count(p, opened, streamed=streamed)
        opened.rest = watched(opened.rest, opened.first, partial(self._produced, p))
        if span is not None and self.telemetry is not None:
            self.telemetry.answered(span, traced(self.settings, body, p.route, who))
            opened.rest = self.telemetry.watch(span, opened.rest, opened.first)
        return await self._answer(p, opened, streamed=streamed)

    async def _answer(self, p: Plan, opened: Opened, *, streamed: bool) -> Response:
        """The client's response: the relayed stream, or the whole message as JSON."""
        sid = client_session(p.session)
        headers = {"x-toolwire-session": sid, "x-toolwire-backend": p.route.backend}
        headers["server-timing"] = upstream_timing(opened.latency)  # latencies.py
        if streamed:
            return p.relay.stream(opened, self.metrics, headers)
        data = json_bytes(await p.relay.collect(opened))
        self.metrics.add("toolwire_proxy_bytes_total", len(data))
        return Response(data, media_type="application/json", headers=headers)

    async def count_tokens(self, request: Request) -> Response:
        """``POST /v1/messages/count_tokens``: over the body as the backend would send it."""
        body = await self.intake.body(request)
        p = await self._plan(body, request, record=False)
        headers = {"x-toolwire-backend": p.route.backend}
        return JSONResponse({"input_tokens": p.reported_tokens}, headers=headers)

    # -- helpers ------------------------------------------------------------------------

    @property
    def _web(self) -> tuple[SearchSettings | None, httpx2.AsyncClient | None]:
        """What the proxy's own web searches need: the provider and the HTTP client."""
        return self.settings.search, self.client

    def _chain(self, p: Plan) -> list[tuple[str, str]]:
        """``p``'s backend and model, then each fallback with the model it is sent."""
        names = chain(p.route.backend, self._fallbacks)
        config = self.settings.config
        return [(p.route.backend, p.route.model)] + [
            (n, config.backend(n).model) for n in names[1:]
        ]

    async def _send(
        self, body: Any, request: Request, p: Plan, names: list[str]
    ) -> tuple[Plan, Opened]:
        """``p`` sent, or its fallbacks in ``names`` in turn (``walk.py``); the plan that
        answered."""
        if len(names) > 1:
            return await walk(
                p,
                names,
                sticky=self.settings.config.backend(names[0]).sticky,
                cooldowns=self.cooldowns,
                metrics=self.metrics,
                open_plan=partial(self._open, body, request),
                replan=partial(self._replan, body, request),
            )
        try:
            return await self._open(body, request, p)
        except UpstreamError as e:
            e.backend = p.route.backend
            raise

    def person(self, request: Request) -> Person | None:
        """Who sent the request, when the key store knows the key it carried (None with
        the single ``token``, which names nobody)."""
        caller: Caller | None = getattr(request.state, "caller", None)
        return None if caller is None else caller.key

    async def _open(self, body: Any, request: Request, p: Plan) -> tuple[Plan, Opened]:
        """``p``'s upstream opened, through the session's next pool key on a 429."""
        replan = partial(self._replan_key, body, request)
        opened = partial(self._open_key, body, request)
        cooldown = self.settings.failover_cooldown
        return await open_pooled(p, opened, replan, self.pools, self.metrics, cooldown)

    async def _replan_key(self, body: Any, request: Request, p: Plan) -> Plan:
        return await self._plan(body, request, record=True, failover=p.failover)

    async def _open_key(self, body: Any, request: Request, p: Plan) -> tuple[Plan, Opened]:
        """``p``'s upstream opened; one that refuses it as too long, compacted tighter."""
        try:
            return p, await open_stream(p.backend, p.request, tap=p.relay.tap)
        except UpstreamError as e:
            if not (self.settings.compaction and is_context_overflow(e.status, e.message, e.code)):
                raise
        # The upstream counted more than the estimate: compact tighter, once.
        self.metrics.add("toolwire_proxy_overflow_retries_total", backend=p.route.backend)
        # A fallback's plan stays its (``failover``): the squeeze is for the same backend.
        retry = partial(self._plan, body, request, record=True, failover=p.failover)
        p = await retry(squeeze=RETRY_SQUEEZE)
        return p, await open_stream(p.backend, p.request, tap=p.relay.tap)

    async def _replan(self, body: Any, request: Request, failover: Failover) -> Plan:
        return await self._plan(body, request, record=True, failover=failover)

    async def _plan(
        self,
        body: Any,
        request: Request,
        *,
        record: bool,
        squeeze: float | None = None,
        failover: Failover | None = None,
    ) -> Plan:
        args = (body, request.headers, self.settings, self.store)
        caller: Caller | None = getattr(request.state, "caller", None)
        work = partial(
            plan,
            *args,
            record=record,
            client=self.client,
            squeeze=squeeze,
            failover=failover,
            choose_key=self.pools.choose,
            owner=None if caller is None else caller.key.owner,
            imported=getattr(request.state, "imported", None),
        )

        def pulled() -> Plan:
            self.cooldowns.pull()  # what the other replicas cooled, before choosing
            return work()

        return await self._with_store(pulled)

    def _count(self, p: Plan, opened: Opened, *, streamed: bool) -> None:
        """The metrics of a request whose upstream answered."""
        add = self.metrics.add
        if p.switched:
            add("toolwire_proxy_switches_total")
        if p.passthrough is not None and p.passthrough.stripped_thinking:
            add("toolwire_proxy_thinking_stripped_total", p.passthrough.stripped_thinking)
        if p.passthrough is not None and p.passthrough.dropped_thinking_param:
            add("toolwire_proxy_thinking_param_dropped_total")
        add("toolwire_proxy_requests_total", route=p.route.reason, backend=p.route.backend)
        if streamed:
            add("toolwire_proxy_streams_total")
        if p.compacted:
            add("toolwire_proxy_compacted_requests_total")
        if p.compacted_now:
            add("toolwire_proxy_compactions_total", backend=p.route.backend)

    async def _produced(self, p: Plan, keys: list[str]) -> None:
        """A response completed: its turn is ``p``'s backend's (``provenance.py``)."""
        await self._update(p.session, partial(_remember, keys, p.route.backend))

    async def _update(self, session: str, change: Callable[[SessionState], None]) -> None:
        """``change`` made to ``session``'s stored state."""
        await self._with_store(partial(self.store.update, session, change))

    async def _with_store(self, work: Callable[[], _T]) -> _T:
        """Run ``work``, which reads or writes the session store, where it belongs."""
        if self.store.blocking:
            # A SQLite write lock or a Redis round trip waits off the loop.
            return await asyncio.to_thread(work)
        return work()


def _remember(keys: list[str], backend: str, state: SessionState) -> None:
    state.remember(keys, backend)


def create_app(
    settings: ProxySettings, store: ProxyStore | None = None, telemetry: Telemetry | None = None
) -> Starlette:
    """The proxy as an ASGI app (the ``Proxy`` is reachable as ``app.state.proxy``).
    ``telemetry``: where spans go (None: OTLP when the environment names an endpoint)."""
    proxy = Proxy(settings, store, telemetry)
    app = proxy.app()
    app.state.proxy = proxy
    return app


__all__ = ["Proxy", "create_app"]

"""The proxy's ASGI app (Starlette): the Anthropic Messages API in front of any backend.

Routes: ``POST /v1/messages`` (streamed or not), ``POST /v1/messages/count_tokens``,
``GET /v1/models``, ``GET /healthz``, ``GET /metrics``, and the control endpoint
``POST /control/switch`` that ``toolwire proxy switch`` calls. Every error is answered
in Anthropic's shape with a one-line message; keys never appear in one.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route as Endpoint

from toolwire.backends import encodable_json, http_client
from toolwire.context import is_context_overflow
from toolwire.proxy.encode import error_payload
from toolwire.proxy.errors import (
    BadRequestError,
    BodyTooLargeError,
    ProxyError,
    RateLimitedError,
    RequestTimeoutError,
    UnauthorizedError,
    UpstreamError,
)
from toolwire.proxy.failover import chain
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.people import Caller, People, metered
from toolwire.proxy.plan import Failover, Plan, plan
from toolwire.proxy.pools import open_pooled
from toolwire.proxy.provenance import watched
from toolwire.proxy.relay import json_bytes
from toolwire.proxy.searching import search_run, searched
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.sharing import Sharing
from toolwire.proxy.state import SessionState, check_session
from toolwire.proxy.stores import ProxyStore, open_store
from toolwire.proxy.telemetry import Person, Telemetry, traced
from toolwire.proxy.upstream import Opened, open_stream
from toolwire.proxy.walk import walk
from toolwire.web import SearchSettings

_T = TypeVar("_T")
# A request the upstream refused as too long is compacted into this share of the usual
# budget and sent once more (as the agent recovers: toolwire.context).
RETRY_SQUEEZE = 0.6
NESTED = "the request is nested too deeply"
UNENCODABLE = "the request holds text that cannot be encoded (a lone surrogate?)"


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
        self.people = People.open(settings.store, settings.ledger, prices.get, self.metrics)
        self._fallbacks = {n: b.fallbacks for n, b in settings.config.backends.items()}
        self.telemetry = Telemetry.from_env() if telemetry is None else telemetry

    def app(self) -> Starlette:
        """The ASGI application."""
        return Starlette(
            routes=[
                Endpoint("/v1/messages", self.messages, methods=["POST"]),
                Endpoint("/v1/messages/count_tokens", self.count_tokens, methods=["POST"]),
                Endpoint("/v1/models", self.models, methods=["GET"]),
                Endpoint("/healthz", self.healthz, methods=["GET"]),
                Endpoint("/metrics", self.render_metrics, methods=["GET"]),
                Endpoint("/control/switch", self.switch, methods=["POST"]),
            ],
            lifespan=self._lifespan,
            exception_handlers={
                ProxyError: self._error,
                # Python's own limits met by the client's input: nesting deeper than the
                # recursion limit, text with lone surrogates (which no encoding takes).
                RecursionError: self._unusable,
                UnicodeError: self._unusable,
                Exception: self._crashed,  # anything else: still Anthropic's shape
            },
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
        body = await self._body(request)
        try:
            return await self._messages(body, request)
        finally:
            # Cooldowns this request started reach the other replicas before it answers.
            await self.sharing.push()

    async def _messages(self, body: Any, request: Request) -> Response:
        p = await self._plan(body, request, record=True)
        caller: Caller | None = request.state.caller
        await self.sharing.admit(
            request.headers, p.input_tokens, None if caller is None else caller.limited
        )
        names = chain(p.route.backend, self._fallbacks)
        tokens = (p.input_tokens, p.request.max_tokens)
        hold = await self.people.admit(caller, p.session, names, p.route.model, tokens)
        who = self.person(request)
        span = (
            None
            if self.telemetry is None
            else self.telemetry.begin(traced(self.settings, body, p.route, who))
        )
        try:
            p, opened = await self._send(body, request, p)
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
        headers = {"x-toolwire-session": p.session, "x-toolwire-backend": p.route.backend}
        if streamed:
            return p.relay.stream(opened, self.metrics, headers)
        data = json_bytes(await p.relay.collect(opened))
        self.metrics.add("toolwire_proxy_bytes_total", len(data))
        return Response(data, media_type="application/json", headers=headers)

    async def count_tokens(self, request: Request) -> Response:
        """``POST /v1/messages/count_tokens``: over the body as the backend would send it."""
        body = await self._body(request)
        p = await self._plan(body, request, record=False)
        headers = {"x-toolwire-backend": p.route.backend}
        return JSONResponse({"input_tokens": p.reported_tokens}, headers=headers)

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the ``[proxy.aliases]`` (Claude Code's picker lists those),
        then each backend as ``backend,model`` (what ``/model`` accepts)."""
        await self._authorize(request)
        config = self.settings.config
        aliases = [
            (alias, f"{model or config.backend(name).model} ({name})")
            for alias, (name, _, model) in (
                (a, t.partition(",")) for a, t in self.settings.aliases.items()
            )
        ]
        backends = [(f"{n},{b.model}", f"{b.model} ({n})") for n, b in config.backends.items()]
        data = [
            {"type": "model", "id": i, "display_name": shown} for i, shown in aliases + backends
        ]
        return JSONResponse({"data": data, "has_more": False})

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz``: liveness (no upstream is contacted)."""
        return JSONResponse({"status": "ok"})

    async def render_metrics(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text (behind the token, like every route but
        ``/healthz``: the counters name the backends and their traffic)."""
        await self._authorize(request)
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4")

    async def switch(self, request: Request) -> Response:
        """``POST /control/switch`` ``{"backend": NAME, "session": ID}``: force a backend."""
        data = await self._body(request)
        if not isinstance(data, dict):
            raise BadRequestError("the body must be a JSON object")
        name, sid = data.get("backend"), check_session(str(data.get("session") or "default"))
        if not isinstance(name, str) or name not in self.settings.config.backends:
            known = ", ".join(self.settings.config.backends)
            raise BadRequestError(f"unknown backend {name!r}; defined: {known}")
        await self._with_store(partial(self.store.update, str(sid), partial(_force, name)))
        return JSONResponse({"session": sid, "backend": name})

    # -- helpers ------------------------------------------------------------------------

    @property
    def _web(self) -> tuple[SearchSettings | None, httpx2.AsyncClient | None]:
        """What the proxy's own web searches need: the provider and the HTTP client."""
        return self.settings.search, self.client

    async def _send(self, body: Any, request: Request, p: Plan) -> tuple[Plan, Opened]:
        """``p`` sent, or its fallbacks in turn (``walk.py``); the plan that answered."""
        names = chain(p.route.backend, self._fallbacks)
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
        work = partial(
            plan,
            *args,
            record=record,
            client=self.client,
            squeeze=squeeze,
            failover=failover,
            choose_key=self.pools.choose,
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
        add("toolwire_proxy_upstream_latency_seconds_sum", opened.latency)
        add("toolwire_proxy_upstream_latency_seconds_count")
        add("toolwire_proxy_requests_total", route=p.route.reason, backend=p.route.backend)
        if streamed:
            add("toolwire_proxy_streams_total")
        if p.compacted:
            add("toolwire_proxy_compacted_requests_total")
        if p.compacted_now:
            add("toolwire_proxy_compactions_total", backend=p.route.backend)

    async def _produced(self, p: Plan, keys: list[str]) -> None:
        """A response completed: its turn is ``p``'s backend's (``provenance.py``)."""
        change = partial(_remember, keys, p.route.backend)
        await self._with_store(partial(self.store.update, p.session, change))

    async def _with_store(self, work: Callable[[], _T]) -> _T:
        """Run ``work``, which reads or writes the session store, where it belongs."""
        if self.store.blocking:
            # A SQLite write lock or a Redis round trip waits off the loop.
            return await asyncio.to_thread(work)
        return work()

    async def _body(self, request: Request) -> Any:
        """The request's JSON, from an authorized client, within ``max_body_bytes``.

        A lone surrogate (``\\ud83d``) in it is made U+FFFD here, once: everything
        downstream (upstream bodies, session keys, the reply) must encode as UTF-8.
        """
        request.state.caller = await self._authorize(request)
        raw = await self._read(request)
        try:
            return encodable_json(raw, json.loads(raw))
        except ValueError as e:
            raise BadRequestError(f"the body is not JSON: {e}") from e
        except RecursionError as e:
            raise BadRequestError(NESTED) from e

    async def _read(self, request: Request) -> bytes:
        limit = self.settings.max_body_bytes
        too_large = f"the request body is over {limit} bytes (max_body_bytes)"
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLargeError(too_large)
        data = bytearray()
        try:
            # A client that sends its body slowly or not at all would hold the request
            # open forever: the whole body has ``body_timeout`` seconds.
            async with asyncio.timeout(self.settings.body_timeout):
                async for chunk in request.stream():
                    data += chunk
                    if len(data) > limit:
                        raise BodyTooLargeError(too_large)
        except TimeoutError as e:
            took = f"the request body took over {self.settings.body_timeout:g} s (body_timeout)"
            raise RequestTimeoutError(took) from e
        return bytes(data)

    async def _authorize(self, request: Request) -> Caller | None:
        """The person whose key the request carries (None: the ``token``, or an open
        proxy); ``UnauthorizedError`` when it carries neither and one is required."""
        token = self.settings.token
        # The auth scheme is case-insensitive (RFC 9110, section 11.1).
        scheme, _, bearer = request.headers.get("authorization", "").strip().partition(" ")
        offered = [request.headers.get("x-api-key", "")]
        if scheme.lower() == "bearer":
            offered.append(bearer.strip())
        offered = [o for o in offered if o]
        if token and any(hmac.compare_digest(o.encode(), token.encode()) for o in offered):
            return None
        caller = await self.people.identify(offered) if offered else None
        if caller is not None:
            return caller
        if token or await self.people.required():
            raise UnauthorizedError("missing, wrong or revoked proxy key")
        return None

    async def _error(self, request: Request, exc: Exception) -> Response:
        """Every refusal, in Anthropic's error shape (the one place that writes one)."""
        if not isinstance(exc, ProxyError):  # registered for ProxyError only
            raise exc
        self.metrics.add("toolwire_proxy_errors_total", kind=exc.kind)
        headers = {"connection": "close"} if isinstance(exc, RequestTimeoutError) else {}
        if isinstance(exc, UpstreamError) and exc.backend is not None:
            headers["x-toolwire-backend"] = exc.backend
        if isinstance(exc, RateLimitedError) and exc.retry_after is not None:
            headers["retry-after"] = str(int(exc.retry_after))
        payload = error_payload(exc.kind, exc.message)
        return JSONResponse(payload, status_code=exc.status, headers=headers)

    async def _unusable(self, request: Request, exc: Exception) -> Response:
        """Input past what Python can hold or encode: a 400 saying which."""
        message = NESTED if isinstance(exc, RecursionError) else UNENCODABLE
        return await self._error(request, BadRequestError(message))

    async def _crashed(self, request: Request, exc: Exception) -> Response:
        """A bug: a 500 in Anthropic's shape (Starlette still logs the traceback)."""
        message = f"internal proxy error ({type(exc).__name__})"
        return await self._error(request, ProxyError(message))


def _force(backend: str, state: SessionState) -> None:
    state.forced = backend


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

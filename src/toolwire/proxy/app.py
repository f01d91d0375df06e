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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route as Endpoint

from toolwire.backends import http_client
from toolwire.proxy.encode import AnthropicEncoder, Payload, error_payload
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.plan import Plan, plan
from toolwire.proxy.provenance import watched
from toolwire.proxy.raw_relay import RawBuffer, collect_raw, stream_raw
from toolwire.proxy.relay import collect, json_bytes, stream_response
from toolwire.proxy.sessions import MemoryStore, SessionState, SessionStore, open_store
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.translate import BadRequestError
from toolwire.proxy.upstream import UpstreamError, estimate_tokens, open_stream

_T = TypeVar("_T")


class BodyTooLargeError(Exception):
    """The request body is over ``max_body_bytes``."""


class Proxy:
    """The proxy's state (settings, session store, metrics, the upstream HTTP client) and
    its request handlers. The client lives as long as the app (its lifespan); without a
    lifespan each upstream response gets a private one."""

    def __init__(self, settings: ProxySettings, store: SessionStore | None = None) -> None:
        self.settings = settings
        self.client: httpx2.AsyncClient | None = None
        if store is None:
            store = open_store(settings.store, settings.store_ttl or None)
        self.store: SessionStore = store
        self.metrics = Metrics()

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
        )

    @asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        async with http_client() as self.client:
            yield
        self.client = None

    # -- endpoints ----------------------------------------------------------------------

    async def messages(self, request: Request) -> Response:
        """``POST /v1/messages``: route, translate (or pass through), relay."""
        try:
            body = await self._body(request)
            p = await self._plan(body, request, record=True)
            estimate = estimate_tokens(p.backend, p.request)
            raw = RawBuffer() if p.passthrough is not None else None
            opened = await open_stream(p.backend, p.request, tap=raw)
        except (BadRequestError, BodyTooLargeError, UpstreamError, PermissionError) as e:
            return self._error(e)
        if p.switched:
            self.metrics.add("toolwire_proxy_switches_total")
        if p.passthrough is not None:
            if p.passthrough.stripped_thinking:
                self.metrics.add(
                    "toolwire_proxy_thinking_stripped_total", p.passthrough.stripped_thinking
                )
            if p.passthrough.dropped_thinking_param:
                self.metrics.add("toolwire_proxy_thinking_param_dropped_total")
        self.metrics.add("toolwire_proxy_upstream_latency_seconds_sum", opened.latency)
        self.metrics.add("toolwire_proxy_upstream_latency_seconds_count")
        self.metrics.add(
            "toolwire_proxy_requests_total", route=p.route.reason, backend=p.route.backend
        )
        opened.rest = watched(opened.rest, opened.first, partial(self._produced, p))
        headers = {"x-toolwire-session": p.session}
        streamed = bool(body.get("stream"))
        if streamed:
            self.metrics.add("toolwire_proxy_streams_total")
        if raw is not None:
            if streamed:
                return stream_raw(raw, opened, self.metrics, headers)
            return await self._collected(collect_raw(raw, opened))
        json_args = getattr(p.backend, "tool_format", "native") == "native"
        encoder = AnthropicEncoder(str(body["model"]), input_tokens=estimate, json_args=json_args)
        if streamed:
            return stream_response(encoder, opened, self.metrics, headers)
        return await self._collected(collect(encoder, opened))

    async def count_tokens(self, request: Request) -> Response:
        """``POST /v1/messages/count_tokens``: over the body as the backend would send it."""
        try:
            body = await self._body(request)
            p = await self._plan(body, request, record=False)
        except (BadRequestError, BodyTooLargeError, UpstreamError, PermissionError) as e:
            return self._error(e)
        return JSONResponse({"input_tokens": estimate_tokens(p.backend, p.request)})

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: each backend as ``backend,model`` (what ``/model`` accepts)."""
        if not self._authorized(request):
            return self._error(PermissionError("missing or wrong proxy token"))
        data = [
            {"type": "model", "id": f"{name},{b.model}", "display_name": f"{b.model} ({name})"}
            for name, b in self.settings.config.backends.items()
        ]
        return JSONResponse({"data": data, "has_more": False})

    async def healthz(self, request: Request) -> Response:
        """``GET /healthz``: liveness (no upstream is contacted)."""
        return JSONResponse({"status": "ok"})

    async def render_metrics(self, request: Request) -> Response:
        """``GET /metrics``: Prometheus text."""
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4")

    async def switch(self, request: Request) -> Response:
        """``POST /control/switch`` ``{"backend": NAME, "session": ID}``: force a backend."""
        try:
            if not self._authorized(request):
                raise PermissionError("missing or wrong proxy token")
            data = json.loads(await self._read(request))
            name, sid = data.get("backend"), data.get("session") or "default"
            if not isinstance(name, str) or name not in self.settings.config.backends:
                known = ", ".join(self.settings.config.backends)
                raise BadRequestError(f"unknown backend {name!r}; defined: {known}")
        except (
            BadRequestError,
            BodyTooLargeError,
            PermissionError,
            ValueError,
            AttributeError,
        ) as e:
            return self._error(e)
        await self._with_store(partial(self.store.update, str(sid), partial(_force, name)))
        return JSONResponse({"session": sid, "backend": name})

    # -- helpers ------------------------------------------------------------------------

    async def _plan(self, body: Any, request: Request, *, record: bool) -> Plan:
        args = (body, request.headers, self.settings, self.store)
        return await self._with_store(partial(plan, *args, record=record, client=self.client))

    async def _produced(self, p: Plan, keys: list[str]) -> None:
        """A response completed: its turn is ``p``'s backend's (``provenance.py``)."""
        change = partial(_remember, keys, p.route.backend)
        await self._with_store(partial(self.store.update, p.session, change))

    async def _with_store(self, work: Callable[[], _T]) -> _T:
        """Run ``work``, which reads or writes the session store, where it belongs."""
        if isinstance(self.store, MemoryStore):
            # CPU work under the GIL: a worker thread would not let the loop relay
            # meanwhile, and handing over costs each stream up to a switch interval.
            return work()
        # A SQLite write lock or a Redis round trip waits off the loop.
        return await asyncio.to_thread(work)

    async def _collected(self, message: Awaitable[Payload]) -> Response:
        try:
            data = json_bytes(await message)
        except UpstreamError as e:
            return self._error(e)
        self.metrics.add("toolwire_proxy_bytes_total", len(data))
        return Response(data, media_type="application/json")

    async def _body(self, request: Request) -> Any:
        if not self._authorized(request):
            raise PermissionError("missing or wrong proxy token")
        raw = await self._read(request)
        try:
            return json.loads(raw)
        except ValueError as e:
            raise BadRequestError(f"the body is not JSON: {e}") from e

    async def _read(self, request: Request) -> bytes:
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLargeError(f"the request body is over {limit} bytes (max_body_bytes)")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > limit:
                raise BodyTooLargeError(f"the request body is over {limit} bytes (max_body_bytes)")
        return bytes(data)

    def _authorized(self, request: Request) -> bool:
        token = self.settings.token
        if not token:
            return True
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        offered = [request.headers.get("x-api-key", ""), bearer]
        return any(hmac.compare_digest(o.encode(), token.encode()) for o in offered if o)

    def _error(self, exc: Exception) -> Response:
        status, kind = _classify(exc)
        message = exc.message if isinstance(exc, UpstreamError) else str(exc)
        message = " ".join(message.split())  # one line, always
        self.metrics.add("toolwire_proxy_errors_total", kind=kind)
        return JSONResponse(error_payload(kind, message), status_code=status)


def _classify(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, UpstreamError):
        return exc.status, exc.kind
    if isinstance(exc, BodyTooLargeError):
        return 413, "request_too_large"
    if isinstance(exc, PermissionError):
        return 401, "authentication_error"
    return 400, "invalid_request_error"


def _force(backend: str, state: SessionState) -> None:
    state.forced = backend


def _remember(keys: list[str], backend: str, state: SessionState) -> None:
    state.remember(keys, backend)


def create_app(settings: ProxySettings, store: SessionStore | None = None) -> Starlette:
    """The proxy as an ASGI app (the ``Proxy`` is reachable as ``app.state.proxy``)."""
    proxy = Proxy(settings, store)
    app = proxy.app()
    app.state.proxy = proxy
    return app


__all__ = ["Proxy", "create_app"]

"""What every client dialect is: routes, an importer and an encoder around the one
plan/relay path.

A dialect declares its routes (path, methods, handler: ``DialectRoute``); a handler reads
the request, imports it into the planner's form (``Imported``: an Anthropic Messages body,
which ``translate.py`` reads into the neutral request, and the relay that encodes the
normalized events, ``toolwire.events``, into the dialect's stream or JSON body) and hands
it to the ``Host``. Routing, failover, people's keys, budgets, the ledger, metrics and the
session store are the Anthropic route's own code (``app.py``), run with that import.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from toolwire.backends.base import ModelRequest, Tap
from toolwire.events import Event
from toolwire.proxy.asgi_stream import EventStreamResponse
from toolwire.proxy.errors import BadRequestError, ProxyError, UpstreamError
from toolwire.proxy.intake import Intake
from toolwire.proxy.metrics import Metrics
from toolwire.proxy.relay import RelayFactory
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.state import SessionState
from toolwire.proxy.stores import ProxyStore
from toolwire.proxy.upstream import Opened

Payload = dict[str, Any]
Finish = Callable[[Payload], Awaitable[None]]


class DialectError(BadRequestError):
    """A malformed request, naming the field (``param``) in the client's own terms."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.param, self.code = param, code


class NotFoundError(DialectError):
    """What the request names is not kept here (a ``previous_response_id``)."""

    status = 404


@dataclass(frozen=True, slots=True)
class Imported:
    """A dialect's request as the planner takes it: ``body`` (the Anthropic Messages
    form: what routing rules, telemetry, budgets and the session read), the ``relay``
    that answers in the dialect, and the neutral ``request`` when the body cannot hold
    all of it (Gemini's call signatures): its ``messages`` are then the history, sent on
    as planned (None: ``translate.py`` reads the body)."""

    body: Payload
    relay: RelayFactory
    request: ModelRequest | None = None


class Keeper:
    """A dialect's own records in the proxy's session store (any replica reads them)."""

    def __init__(self, store: ProxyStore, run: Callable[[Callable[[], Any]], Awaitable[Any]]):
        self._store, self._run = store, run

    async def load(self, key: str) -> Payload:
        state: SessionState = await self._run(lambda: self._store.load(key))
        return state.saved

    async def save(self, key: str, value: Payload) -> None:
        def put(state: SessionState) -> None:
            state.saved = value

        await self._run(lambda: self._store.update(key, put))


class Host(Protocol):
    """What a dialect's handlers call on the proxy (``app.Proxy``)."""

    intake: Intake
    settings: ProxySettings

    @property
    def keeper(self) -> Keeper: ...

    async def serve(self, imported: Imported, request: Request) -> Response:
        """Plan, send (with failover), meter and relay ``imported``, as ``/v1/messages``."""
        ...

    async def count(self, imported: Imported, request: Request) -> int:
        """The input tokens of ``imported`` as its backend would be sent it (unscaled)."""
        ...


Handler = Callable[[Host, Request], Awaitable[Response]]
Importer = Callable[[Any, Request, Keeper], Awaitable[Imported]]


@dataclass(frozen=True, slots=True)
class DialectRoute:
    """One route of a dialect: its path (Starlette's syntax), methods and handler."""

    path: str
    handle: Handler
    methods: tuple[str, ...] = ("POST",)


def importing(importer: Importer) -> Handler:
    """The handler of a route that only imports its body and serves it."""

    async def handle(host: Host, request: Request) -> Response:
        body = await host.intake.body(request)
        return await host.serve(await importer(body, request, host.keeper), request)

    return handle


class Dialect(Protocol):
    """One client dialect: its routes and its error shape (every refusal on its routes)."""

    name: str

    @property
    def routes(self) -> tuple[DialectRoute, ...]: ...

    def error(self, exc: ProxyError) -> Payload:
        """``exc`` as this dialect's error body."""
        ...


class Encoder(Protocol):
    """One response's encoder: ``start``, then ``feed`` each event (the stream's bytes);
    ``result`` is the whole answer as one JSON body."""

    done: bool
    stopped: bool
    failure: str | None

    def start(self) -> bytes: ...

    def feed(self, event: Event) -> bytes: ...

    def result(self) -> Payload: ...


class DialectRelay:
    """A ``Relay`` (``relay.py``) answering with a dialect's ``Encoder``; ``finish`` is
    awaited with the whole answer before its last bytes reach the client."""

    tap: Tap | None = None

    def __init__(self, make: Callable[[], Encoder], finish: Finish | None = None) -> None:
        self._make, self._finish = make, finish

    def stream(self, opened: Opened, metrics: Metrics, headers: dict[str, str]) -> Response:
        body = self._relay(self._make(), opened, metrics)
        return EventStreamResponse(body, {"cache-control": "no-cache", **headers})

    async def collect(self, opened: Opened) -> Payload:
        encoder = self._make()
        encoder.start()
        encoder.feed(opened.first)
        try:
            async for event in opened.rest:
                encoder.feed(event)
        finally:
            await opened.rest.aclose()
        if encoder.failure is not None:
            raise UpstreamError(500, "api_error", encoder.failure)
        result = encoder.result()
        if self._finish is not None:
            await self._finish(result)
        return result

    async def _relay(
        self, encoder: Encoder, opened: Opened, metrics: Metrics
    ) -> AsyncGenerator[bytes, None]:
        """The stream's bytes; the upstream is closed however this ends. The bytes that
        end the answer wait for ``finish`` (a stored answer is kept before the client
        can ask to continue it)."""
        sent = 0
        try:
            last = encoder.start() + encoder.feed(opened.first)
            if not encoder.done:
                yield last
                sent, last = len(last), b""
                async for event in opened.rest:
                    chunk = encoder.feed(event)
                    if encoder.done:
                        last = chunk
                        break
                    if chunk:
                        yield chunk
                        sent += len(chunk)
            if encoder.stopped and self._finish is not None:
                await self._finish(encoder.result())
            if last:
                yield last
                sent += len(last)
        finally:
            metrics.add("toolwire_proxy_bytes_total", sent)
            await opened.rest.aclose()
        if not encoder.stopped:
            metrics.add("toolwire_proxy_errors_total", kind="upstream_stream")


__all__ = [
    "Dialect",
    "DialectError",
    "DialectRelay",
    "DialectRoute",
    "Encoder",
    "Finish",
    "Handler",
    "Host",
    "Imported",
    "Importer",
    "Keeper",
    "NotFoundError",
    "Payload",
    "importing",
]

"""OpenTelemetry spans, one per ``/v1/messages`` request (docs/proxy.md, "Telemetry").

Only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is
set: the spans then go over OTLP/HTTP (the exporter reads the other standard
``OTEL_EXPORTER_OTLP_*`` variables itself). Unset, nothing is imported and each request
pays one ``None`` check. The packages are the optional extra ``toolwire[otel]``.

A span carries the GenAI semantic-convention attributes (provider, operation, the
requested and the answering model, token usage, finish reason), the backend and route,
and the user and team when the request's key names them. Never message text: no prompt,
no completion, no system prompt, no tool arguments, nor the session's id (it may be
derived from the client's metadata).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolwire.events import Event, MessageEnd, Usage
from toolwire.providers import profile
from toolwire.proxy.routing import Route
from toolwire.proxy.settings import ProxySettings

if TYPE_CHECKING:  # the packages are optional: imported only when telemetry is on
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
SERVICE_NAME = "toolwire-proxy"
INSTALL = "pip install 'toolwire[otel]'"

log = logging.getLogger(__name__)


class Person(Protocol):
    """Who sent a request, as the key store knows them (``Proxy.person``)."""

    @property
    def user(self) -> str: ...

    @property
    def team(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Traced:
    """What a request's span is opened with (none of it message text)."""

    backend: str
    provider: str
    requested_model: str
    model: str
    route: str
    max_tokens: int | None = None
    stream: bool = False
    person: Person | None = None


class Telemetry:
    """Opens and closes the spans of requests on ``tracer``."""

    def __init__(self, tracer: Tracer, provider: TracerProvider | None = None) -> None:
        self.tracer = tracer
        self._provider = provider

    @classmethod
    def from_env(cls) -> Telemetry | None:
        """Telemetry exporting over OTLP/HTTP when an endpoint is set, else None (the
        exporter reads the same environment)."""
        if not any(os.environ.get(name) for name in ENDPOINT_ENVS):
            return None
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not "
                        "installed: no spans are exported (%s)", INSTALL)  # fmt: skip
            return None
        return cls.exporting(OTLPSpanExporter(), batch=True)

    @classmethod
    def exporting(cls, exporter: SpanExporter, *, batch: bool = False) -> Telemetry:
        """Telemetry whose spans go to ``exporter`` (``batch``: in the background)."""
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        # A provider of our own, not the global one: an embedding app keeps its own.
        provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
        processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
        provider.add_span_processor(processor)
        return cls(provider.get_tracer("toolwire.proxy"), provider)

    def begin(self, t: Traced) -> Span:
        """The span of a request about to be sent upstream."""
        from opentelemetry.trace import SpanKind

        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": t.provider,
            # The name before semantic conventions 1.37, which many backends still read.
            "gen_ai.system": t.provider,
            "gen_ai.request.model": t.requested_model,
            "toolwire.backend": t.backend,
            "toolwire.route": t.route,
            "toolwire.stream": t.stream,
        }
        if t.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = t.max_tokens
        if t.person is not None:
            attributes["user.id"] = t.person.user
            if t.person.team is not None:
                attributes["toolwire.team"] = t.person.team
        name = f"chat {t.requested_model}"
        span = self.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        span.set_attribute("gen_ai.response.model", t.model)
        return span

    def answered(self, span: Span, t: Traced) -> None:
        """The backend that answered (a fallback, when the routed one failed)."""
        span.set_attribute("toolwire.backend", t.backend)
        span.set_attribute("toolwire.route", t.route)
        span.set_attribute("gen_ai.provider.name", t.provider)
        span.set_attribute("gen_ai.system", t.provider)
        span.set_attribute("gen_ai.response.model", t.model)

    async def watch(
        self, span: Span, events: AsyncGenerator[Event, None], first: Event
    ) -> AsyncGenerator[Event, None]:
        """``events`` unchanged; the span gets the usage and finish reason of the
        response's end and ends with the stream (cut short: an error)."""
        ended = _end(span, first)
        try:
            async for event in events:
                ended = ended or _end(span, event)
                yield event
        finally:
            if not ended:
                _fail(span, "incomplete")
            span.end()
            await events.aclose()

    def failed(self, span: Span, kind: str) -> None:
        """The request was refused (``kind``: the error kind the client is told)."""
        _fail(span, kind)
        span.end()

    def close(self) -> None:
        """Send what is still queued, and stop."""
        if self._provider is not None:
            self._provider.shutdown()


def traced(
    settings: ProxySettings, body: Mapping[str, Any], chosen: Route, who: Person | None
) -> Traced:
    """What the span of a request (``body``, routed to ``chosen``) says about it."""
    provider = settings.config.backend(chosen.backend).provider
    max_tokens = body.get("max_tokens")
    return Traced(
        backend=chosen.backend,
        provider=provider_name(provider),
        requested_model=str(body.get("model")),
        model=chosen.model,
        route=chosen.reason,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        stream=bool(body.get("stream")),
        person=who,
    )


def provider_name(provider: str) -> str:
    """``gen_ai.provider.name`` for a backend's ``provider`` (its profile's ``otel_name``)."""
    known = profile(provider)
    return known.otel_name if known is not None else provider


def _end(span: Span, event: Event) -> bool:
    if not isinstance(event, MessageEnd):
        return False
    span.set_attribute("gen_ai.response.finish_reasons", [event.stop_reason])
    _usage(span, event.usage or Usage())
    if event.stop_reason == "error":
        _fail(span, "upstream")
    return True


def _usage(span: Span, usage: Usage) -> None:
    counts = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }
    for name, value in counts.items():
        if value is not None:
            span.set_attribute(name, value)


def _fail(span: Span, kind: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, kind))


__all__ = ["ENDPOINT_ENVS", "Person", "Telemetry", "Traced", "provider_name", "traced"]

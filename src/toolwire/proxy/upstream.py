"""Opening the upstream: the backend for a route, its first event, failures as Anthropic errors.

The first event is awaited before the client gets a status line, so an upstream that
refuses the request (429, 529, 400, 500, a timeout) is answered with that status in
Anthropic's error shape, with the upstream's own message (keys scrubbed by the backend).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx2

from toolwire.backends import HTTPBackend
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.base import ModelRequest, Tap, TappableBackend
from toolwire.backends.factory import create_backend
from toolwire.config.schema import BackendConfig, ConfigError, LimitsConfig
from toolwire.context.tokens import estimate_request, estimate_wire
from toolwire.decode.anthropic import AnthropicDecoder
from toolwire.errors import HTTPStatusError, TransportError, TransportTimeoutError
from toolwire.events import Event
from toolwire.proxy.errors import UpstreamError
from toolwire.proxy.passthrough import Prepared
from toolwire.proxy.routing import Route
from toolwire.proxy.settings import ProxySettings

_CLIENT_KEY_ENV = "TOOLWIRE_PROXY_CLIENT_KEY"  # a name in a private mapping, never os.environ
_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class PassthroughBackend(AnthropicBackend):
    """An Anthropic backend bound to one prepared request (``passthrough.py``): it sends
    that body, with the client headers chosen to be forwarded (``anthropic-beta``...).
    ``attach`` is shown each response's decoder (the raw relay cuts on what it parses)."""

    def __init__(
        self,
        prepared: Prepared,
        attach: Callable[[AnthropicDecoder], None] | None = None,
        **options: Any,
    ) -> None:
        # The raw relay sends the upstream's own bytes: events changed by a rescue would
        # no longer match them (docs/decoding.md, "Rescue").
        super().__init__(**{**options, "rescue": False})
        self.prepared = prepared
        self._attach = attach

    def decoder(self) -> AnthropicDecoder:
        decoder = AnthropicDecoder()
        if self._attach is not None:
            self._attach(decoder)
        return decoder

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.prepared.body

    def headers(self) -> dict[str, str]:
        return {**super().headers(), **self.prepared.headers}


def make_backend(
    route: Route,
    settings: ProxySettings,
    client_key: str | None,
    *,
    prepared: Prepared | None = None,
    attach: Callable[[AnthropicDecoder], None] | None = None,
    client: httpx2.AsyncClient | None = None,
    key_env: str | None = None,
) -> TappableBackend:
    """The backend of ``route``; an Anthropic one may carry the client's key (if allowed).
    ``key_env``: the variable of the pool key chosen for this request (``pools.py``).

    With ``prepared`` (an Anthropic backend), a ``PassthroughBackend`` sending it, its
    decoders shown to ``attach``. ``client``: the proxy's HTTP client (its lifespan's)."""
    base = settings.config.backend(route.backend)
    environ: Mapping[str, str] | None = None
    if settings.pass_client_key and base.provider == "anthropic" and client_key:
        key_env, environ = _CLIENT_KEY_ENV, {_CLIENT_KEY_ENV: client_key}
    config, limits = _configured(settings, base, route.model, key_env)
    try:
        cls = None if prepared is None else partial(PassthroughBackend, prepared, attach)
        return create_backend(config, limits, environ=environ, http_class=cls, client=client)
    except ConfigError as e:
        raise UpstreamError(500, "api_error", str(e)) from e


def _configured(
    settings: ProxySettings, base: BackendConfig, model: str, key_env: str | None
) -> tuple[BackendConfig, LimitsConfig]:
    """``base`` sent ``model`` with the key in ``key_env`` (None: its own), and the limits
    it is sent with. Kept per settings (``_CONFIGURED``): the same few on every request,
    and two pydantic copies each time were a good part of a request's set-up."""
    limits = settings.config.limits
    key = (id(settings), id(base), id(limits), model, key_env)
    found = _CONFIGURED.get(key)
    if found is not None and found[0] is settings and found[1] is base and found[2] is limits:
        return found[3], found[4]
    config = base.model_copy(update={"model": model})
    if key_env is not None:
        config = config.model_copy(update={"api_key_env": key_env})
    # The client retries failed requests itself (Claude Code: about 10 times), so the
    # proxy's own retries default to none: retrying twice over multiplies the wait.
    # A backend with fallbacks never retries: its failure goes to the next one at once.
    retries = 0 if config.fallbacks else settings.retries
    sent = limits.model_copy(update={"max_retries": retries})
    if len(_CONFIGURED) >= _CONFIGURED_MAX:
        _CONFIGURED.clear()
    _CONFIGURED[key] = (settings, base, limits, config, sent)
    return config, sent


# (settings, backend, limits, model, key variable) -> what ``_configured`` made of them;
# the objects themselves are kept with it, so an id is never another's.
_CONFIGURED: dict[tuple[int, int, int, str, str | None], Any] = {}
_CONFIGURED_MAX = 256


def estimate_tokens(backend: TappableBackend, request: ModelRequest) -> int:
    """An estimate of the input tokens of the body as it will be sent upstream.

    The backend's own builder writes the exact upstream body (system, every message with
    its tool_use/tool_result/thinking content, tool schemas), counted by
    ``context.tokens.estimate_wire``; a backend with no HTTP body (a replay) is counted
    on its history, as the agent counts it.
    """
    if isinstance(backend, HTTPBackend):
        return estimate_wire(backend.body_text(request))  # built once: the same text is sent
    return estimate_request(request.system, request.messages, request.tools)


@dataclass(slots=True)
class Opened:
    """An upstream stream whose first event has arrived (``latency``: seconds to it)."""

    first: Event
    rest: AsyncGenerator[Event, None]
    latency: float


async def open_stream(
    backend: TappableBackend, request: ModelRequest, tap: Tap | None = None
) -> Opened:
    """Send the request and wait for its first event; ``UpstreamError`` if refused.

    ``tap`` gets the upstream's raw bytes as they arrive (the pass-through relays them)."""
    started = time.monotonic()
    events = backend.stream(request, tap=tap)
    try:
        first = await events.__anext__()
    except HTTPStatusError as e:
        await events.aclose()
        status = e.status if e.status in _KINDS or e.status >= 500 else 400
        kind = _KINDS.get(status, "api_error")
        error = UpstreamError(status, kind, e.message, e.code)
        error.retry_after = e.retry_after
        raise error from e
    except TransportTimeoutError as e:
        await events.aclose()
        raise UpstreamError(504, "timeout_error", str(e)) from e
    except TransportError as e:
        await events.aclose()
        raise UpstreamError(502, "api_error", str(e)) from e
    except StopAsyncIteration as e:
        raise UpstreamError(502, "api_error", "the upstream sent an empty response") from e
    return Opened(first, events, time.monotonic() - started)


__all__ = [
    "Opened",
    "PassthroughBackend",
    "estimate_tokens",
    "make_backend",
    "open_stream",
]

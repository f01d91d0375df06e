"""Every refusal the proxy answers, in Anthropic's error shape with a one-line message
(the one place that writes one): its own ``ProxyError``s, input Python cannot hold, and
its bugs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from toolwire.proxy.encode import error_payload
from toolwire.proxy.errors import (
    BadRequestError,
    ProxyError,
    RateLimitedError,
    RequestTimeoutError,
    UpstreamError,
)
from toolwire.proxy.intake import NESTED, UNENCODABLE
from toolwire.proxy.metrics import Metrics

Handler = Callable[[Request, Exception], Awaitable[Response]]


class Refusals:
    """The app's exception handlers, counting each refusal in ``metrics``."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def handlers(self) -> dict[type[Exception], Handler]:
        """Starlette's ``exception_handlers``."""
        return {
            ProxyError: self.error,
            # Python's own limits met by the client's input: nesting deeper than the
            # recursion limit, text with lone surrogates (which no encoding takes).
            RecursionError: self.unusable,
            UnicodeError: self.unusable,
            Exception: self.crashed,  # anything else: still Anthropic's shape
        }

    async def error(self, request: Request, exc: Exception) -> Response:
        """A ``ProxyError`` as its status and Anthropic's error body."""
        if not isinstance(exc, ProxyError):  # registered for ProxyError only
            raise exc
        self.metrics.add("toolwire_proxy_errors_total", kind=exc.kind)
        headers = {"connection": "close"} if isinstance(exc, RequestTimeoutError) else {}
        if isinstance(exc, UpstreamError) and exc.backend is not None:
            headers["x-toolwire-backend"] = exc.backend
        if isinstance(exc, RateLimitedError) and exc.retry_after is not None:
            headers["retry-after"] = str(int(exc.retry_after))
        # A route of another dialect answers in its own error shape (``proxy.dialects``).
        shape = getattr(request.state, "error_shape", None) or _anthropic
        payload = shape(exc)
        return JSONResponse(payload, status_code=exc.status, headers=headers)

    async def unusable(self, request: Request, exc: Exception) -> Response:
        """Input past what Python can hold or encode: a 400 saying which."""
        message = NESTED if isinstance(exc, RecursionError) else UNENCODABLE
        return await self.error(request, BadRequestError(message))

    async def crashed(self, request: Request, exc: Exception) -> Response:
        """A bug: a 500 in Anthropic's shape (Starlette still logs the traceback)."""
        message = f"internal proxy error ({type(exc).__name__})"
        return await self.error(request, ProxyError(message))


def _anthropic(exc: ProxyError) -> dict[str, object]:
    return error_payload(exc.kind, exc.message)


__all__ = ["Refusals"]

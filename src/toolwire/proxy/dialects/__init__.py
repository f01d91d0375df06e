"""The client dialects the proxy takes besides Anthropic's Messages (docs/proxy.md,
"Adding a dialect"): each declares its routes and error shape, imports its requests into
the planner's form and encodes the normalized events, served through the one plan/relay
path (``app.py`` registers every route here)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolwire.proxy.dialects.base import Dialect, DialectRoute, Handler, Host, Imported, Keeper
from toolwire.proxy.dialects.gemini import Gemini
from toolwire.proxy.dialects.openai_chat import OpenAIChat
from toolwire.proxy.dialects.openai_responses import OpenAIResponses

# One line per dialect.
DIALECTS: tuple[Dialect, ...] = (
    OpenAIChat(),
    OpenAIResponses(),
    Gemini(),
)


def dialect_routes(host: Host) -> list[Route]:
    """Every dialect's routes served on ``host``; a refusal on one takes its dialect's
    error shape (``refusals.py`` reads it from the request)."""
    return [
        Route(route.path, _endpoint(host, dialect, route.handle), methods=list(route.methods))
        for dialect in DIALECTS
        for route in dialect.routes
    ]


def _endpoint(
    host: Host, dialect: Dialect, handle: Handler
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        request.state.error_shape = dialect.error
        return await handle(host, request)

    return endpoint


__all__ = ["DIALECTS", "Dialect", "DialectRoute", "Host", "Imported", "Keeper", "dialect_routes"]

"""What a client dialect hands the planner, and what the app needs of one.

A dialect is an importer (its request -> ``Imported``: the neutral request and history,
the session, an Anthropic-shaped summary for the routing rules and telemetry) and an
encoder (normalized events -> its own stream or JSON, behind a ``Relay``). The plan,
failover, keys, budgets, ledger, metrics and session store are the Anthropic path's own:
``plan.plan`` takes the ``Imported`` instead of reading an Anthropic body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from toolwire.backends.base import ModelRequest
from toolwire.history import Message
from toolwire.proxy.intake import Intake
from toolwire.proxy.relay import Relay
from toolwire.proxy.settings import ProxySettings

Payload = dict[str, Any]


class RelayFactory(Protocol):
    """The relay that encodes an answer in the client's dialect."""

    def __call__(self, input_tokens: int, *, json_args: bool) -> Relay:
        """``input_tokens``: the estimate of what was sent; ``json_args``: the backend's
        argument pieces are JSON text (else only each call's end has its arguments)."""
        ...


@dataclass(frozen=True, slots=True)
class Imported:
    """A request of another dialect in the planner's terms.

    ``body``: the request as an Anthropic Messages body (``model``, ``stream``,
    ``max_tokens``, ``messages``, ``system``, ``tools``, ``thinking``): what the routing
    rules, telemetry and the budgets read; ``request``: the neutral request sent on (its
    ``messages`` are replaced by the planned view of ``history``); ``history``: what the
    client sent, as a neutral history (it keeps what the body cannot: call signatures);
    ``session``: the session id; ``relay``: the encoder back into the dialect.
    """

    body: Mapping[str, Any]
    request: ModelRequest
    history: tuple[Message, ...]
    session: str
    relay: RelayFactory


class Host(Protocol):
    """What a dialect's routes call on the proxy."""

    intake: Intake
    settings: ProxySettings

    async def serve(self, imported: Imported, request: Request) -> Response:
        """Plan, send (with failover), meter and relay ``imported``, as ``/v1/messages``."""
        ...

    async def count(self, imported: Imported, request: Request) -> int:
        """The input tokens of ``imported`` as its backend would be sent it."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """A client dialect: its name, the path prefixes it serves (its refusals take its
    error shape), its error body, and its routes on a ``Host``."""

    name: str
    prefixes: tuple[str, ...]
    error: Callable[[int, str, str], Payload]
    """(HTTP status, Anthropic error type, one-line message) -> the error body."""
    routes: Callable[[Host], list[BaseRoute]]


__all__ = ["Dialect", "Host", "Imported", "Payload", "RelayFactory"]

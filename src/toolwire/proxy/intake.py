"""What the proxy takes in before it plans: the caller a request's key names, and its
JSON body, read within ``max_body_bytes`` and ``body_timeout``."""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from toolwire.backends import encodable_json
from toolwire.proxy.errors import (
    BadRequestError,
    BodyTooLargeError,
    ForbiddenError,
    RequestTimeoutError,
    UnauthorizedError,
)
from toolwire.proxy.people import Caller, People
from toolwire.proxy.settings import ProxySettings

NESTED = "the request is nested too deeply"
UNENCODABLE = "the request holds text that cannot be encoded (a lone surrogate?)"
ADMIN_KEY = "a key made with `toolwire proxy keys add --admin`"


@dataclass(frozen=True, slots=True)
class Access:
    """Who a request is: ``caller``, the person its key names (None: the ``token``, the
    admin token or an open proxy); ``admin``, whether it may act for anyone; ``sent``,
    its credential in words for a refusal (never the key itself)."""

    caller: Caller | None
    admin: bool
    sent: str


class Intake:
    """Authorizing a request and reading its body, for every route behind the token."""

    def __init__(self, settings: ProxySettings, people: People) -> None:
        self.settings, self.people = settings, people

    async def body(self, request: Request, *, empty: Any = None) -> Any:
        """The request's JSON, from an authorized client, within ``max_body_bytes``;
        ``empty`` when there is no body and ``empty`` is given (None: a body is needed).

        A lone surrogate (``\\ud83d``) in it is made U+FFFD here, once: everything
        downstream (upstream bodies, session keys, the reply) must encode as UTF-8.
        """
        access = await self.access(request)
        request.state.caller, request.state.access = access.caller, access
        raw = await self._read(request)
        if empty is not None and not raw.strip():
            return empty
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

    async def authorize(self, request: Request) -> Caller | None:
        """The person whose key the request carries (None: the ``token``, the admin token
        or an open proxy); ``UnauthorizedError`` when it carries none and one is required."""
        access = await self.access(request)
        request.state.caller, request.state.access = access.caller, access
        return access.caller

    async def access(self, request: Request) -> Access:
        """``authorize``, with whether the request is an admin's and what it sent."""
        return await self.access_of(_offered(request))

    async def access_of(self, offered: Sequence[str]) -> Access:
        """Who ``offered`` credentials are (a request's, or a key typed into ``/ui``)."""
        if _matches(offered, self.settings.admin_token):
            return Access(None, admin=True, sent="the admin token")
        if _matches(offered, self.settings.token):
            return Access(None, admin=False, sent="the [proxy] token")
        caller = await self.people.identify(offered) if offered else None
        if caller is not None:
            record = caller.key
            kind = "admin key" if record.admin else "key"
            return Access(caller, record.admin, f"the {kind} {record.id} of {record.user}")
        if self.settings.token or await self.people.required():
            if not offered:
                raise UnauthorizedError(
                    "no proxy key sent (x-api-key, Authorization: Bearer or x-goog-api-key)"
                )
            raise UnauthorizedError("the proxy key sent is wrong or revoked")
        return Access(None, admin=False, sent="no key (an open proxy)")

    async def admin(self, request: Request, what: str) -> Access:
        """``access`` for what only an admin may do once people have keys (before that,
        as every route: the ``token`` or nothing); ``ForbiddenError`` saying what is needed."""
        access = await self.access(request)
        if access.admin or not await self.people.required():
            return access
        needs = self.admin_needs()
        raise ForbiddenError(f"{what} needs an admin: {needs}; this request sent {access.sent}")

    def admin_needs(self) -> str:
        """The admin credentials this proxy takes, in words."""
        env = self.settings.admin_token_env
        if env:
            return f"the admin token (${env}) or {ADMIN_KEY}"
        return f"{ADMIN_KEY}, or an admin token in the variable [proxy] admin_token_env names"


def _offered(request: Request) -> list[str]:
    """The credentials a request carries: ``x-api-key``, a Bearer token, and Google's
    ``x-goog-api-key`` or ``?key=`` (what the Gemini SDKs send)."""
    # The auth scheme is case-insensitive (RFC 9110, section 11.1).
    scheme, _, bearer = request.headers.get("authorization", "").strip().partition(" ")
    headers = request.headers
    offered = [headers.get("x-api-key", ""), headers.get("x-goog-api-key", "")]
    if b"key" in request.scope.get("query_string", b""):  # parsed only when it may be there
        offered.append(request.query_params.get("key", ""))
    if scheme.lower() == "bearer":
        offered.append(bearer.strip())
    return [o for o in offered if o]


def _matches(offered: Sequence[str], secret: str | None) -> bool:
    return bool(secret) and any(
        hmac.compare_digest(o.encode(), str(secret).encode()) for o in offered
    )


__all__ = ["ADMIN_KEY", "NESTED", "UNENCODABLE", "Access", "Intake"]

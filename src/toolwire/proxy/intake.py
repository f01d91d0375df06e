"""What the proxy takes in before it plans: the caller a request's key names, and its
JSON body, read within ``max_body_bytes`` and ``body_timeout``."""

from __future__ import annotations

import asyncio
import hmac
import json
from typing import Any

from starlette.requests import Request

from toolwire.backends import encodable_json
from toolwire.proxy.errors import (
    BadRequestError,
    BodyTooLargeError,
    RequestTimeoutError,
    UnauthorizedError,
)
from toolwire.proxy.people import Caller, People
from toolwire.proxy.settings import ProxySettings

NESTED = "the request is nested too deeply"
UNENCODABLE = "the request holds text that cannot be encoded (a lone surrogate?)"


class Intake:
    """Authorizing a request and reading its body, for every route behind the token."""

    def __init__(self, settings: ProxySettings, people: People) -> None:
        self.settings, self.people = settings, people

    async def body(self, request: Request) -> Any:
        """The request's JSON, from an authorized client, within ``max_body_bytes``.

        A lone surrogate (``\\ud83d``) in it is made U+FFFD here, once: everything
        downstream (upstream bodies, session keys, the reply) must encode as UTF-8.
        """
        request.state.caller = await self.authorize(request)
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

    async def authorize(self, request: Request) -> Caller | None:
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


__all__ = ["NESTED", "UNENCODABLE", "Intake"]

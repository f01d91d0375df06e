"""The HTTP half every provider backend shares: POST, retry, stream, translate failures.

httpx's exceptions are translated here and nowhere else (``raise ... from``). The rules
(see ``base`` for the caller's side of the contract):

* Before the first byte of a successful response, 429, 5xx (Anthropic's 529 included)
  and an ``overloaded_error`` body are retried with exponential backoff and jitter,
  honouring ``retry-after`` / ``retry-after-ms``; any other error status becomes
  ``HTTPStatusError`` carrying the provider's own message on one line, keys scrubbed.
* After the first byte nothing is retried (the user has seen output): a broken
  connection or a silent server ends the open calls with errors and a ``StreamError``.

The HTTP client is the caller's (``client=``, from ``_wire.http_client()``, closed by
whoever made it). A backend made without one opens a private client for each response
and closes it with the response: right for one-shots, a new connection every time.
"""

from __future__ import annotations

import asyncio
import json
import random
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Iterator
from contextlib import AsyncExitStack, aclosing, contextmanager
from functools import lru_cache
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

import httpx2

from toolwire.backends._adapt import Adapter, adapter_for
from toolwire.backends._failures import (
    one_line,
    provider_code,
    provider_message,
    provider_param,
    reason,
    retry_after,
)
from toolwire.backends._names import NameRule, rewritten
from toolwire.backends._text import encodable
from toolwire.backends._wire import body_chunks, http_client
from toolwire.backends.base import HTTPSettings, ModelRequest, Tap
from toolwire.config.choices import ToolFormat, WireFormat, native_tools
from toolwire.decode import Decoder, decoder_for
from toolwire.errors import HTTPStatusError, TransportError, TransportTimeoutError
from toolwire.events import Event, MessageEnd, StreamError, ToolCallEnd
from toolwire.providers import ProviderProfile
from toolwire.secrets import mask_urls, scrub

_MAX_ERROR_BODY = 65536


class HTTPBackend(ABC):
    """Base of the provider backends: subclasses build the URL, headers and JSON body,
    and name their ``profile`` (``toolwire.providers``), which gives the rest."""

    profile: ClassVar[ProviderProfile]
    provider: str = ""
    wire_format: WireFormat
    default_base_url: str = ""
    name_rule: NameRule | None = None
    """The provider's tool name rule; names it rejects are rewritten (``_names``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found = cls.__dict__.get("profile")
        if found is not None:  # a subclass of a provider's backend keeps its facts
            cls.provider = found.wire_format
            cls.wire_format = cast(WireFormat, found.wire_format)
            cls.default_base_url = found.default_url
            cls.name_rule = found.name_rule

    def __init__(
        self,
        *,
        name: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str | None = None,
        base_url: str | None = None,
        tool_format: ToolFormat = "native",
        settings: HTTPSettings | None = None,
        client: httpx2.AsyncClient | None = None,
        vision: bool = True,
        rescue: bool = False,
    ) -> None:
        self.name = name
        self.model = model
        self.tool_format = tool_format
        self.vision = vision and native_tools(tool_format)
        """Images go to the model (else each becomes a note: ``history.images``)."""
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.rescue = rescue
        """Calls the server leaked into the text become calls (``decode.rescue``)."""
        self.settings = settings or HTTPSettings()
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._body: tuple[ModelRequest, str] | None = None
        self._client = client

    @property
    def client(self) -> httpx2.AsyncClient | None:
        """The HTTP client it sends with; None: a private one per response (module doc)."""
        return self._client

    # -- what a provider defines --------------------------------------------------------

    @abstractmethod
    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request`` (a pure function of the request and settings)."""

    @abstractmethod
    def url(self) -> str:
        """The streaming endpoint."""

    @abstractmethod
    def auth_headers(self, api_key: str) -> dict[str, str]:
        """The headers that carry the key."""

    def body_text(self, request: ModelRequest) -> str:
        """``build_body(request)`` as the JSON text sent (compact, as httpx2 writes it).

        Kept until the request is sent: the proxy sizes a request (its token estimate)
        before sending it, and a long history should be built and serialized once.
        Always encodable as UTF-8: a lone surrogate anywhere in the history is sent as
        U+FFFD (``_text``), or it would fail this request and every later one.
        """
        if self._body is None or self._body[0] is not request:
            body = self.build_body(request)
            text = _BODY_JSON.encode(body)
            text = encodable(text)
            self._body = (request, text)
        return self._body[1]

    def headers(self) -> dict[str, str]:
        """Every request header, the key's included when there is one."""
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self._api_key:
            headers.update(self.auth_headers(self._api_key))
        headers.update(dict(self.settings.extra_headers))
        return headers

    # -- streaming ----------------------------------------------------------------------

    async def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        """POST the request and yield its events as they decode (see ``base``)."""
        body = self.body_text(request).encode()
        self._body = None  # sent from here on: a long-lived backend need not hold it
        native = native_tools(self.tool_format)
        # Names the builder rewrote for this provider come back as the ones offered.
        names = rewritten(request.tools, self.name_rule) if native else None
        source = f"backend {self.name!r} at {self._host()}"
        adapter = adapter_for(self.tool_format, request, names, rescue=self.rescue, source=source)
        async with AsyncExitStack() as stack:
            client = self._client
            if client is None:  # a private one, for this response only (module doc)
                client = await stack.enter_async_context(http_client())
            response = await self._open(client, body)
            events = self._events(response, self.decoder(), tap, adapter)
            try:
                async with aclosing(events):
                    async for event in events:
                        yield names.restore(event) if names else event
            finally:
                await response.aclose()

    def decoder(self) -> Decoder:
        """A decoder for one response body (a subclass may watch what it parses)."""
        return decoder_for(self.wire_format)

    async def _open(self, client: httpx2.AsyncClient, body: bytes) -> httpx2.Response:
        """Send until a 2xx answers; retry what may pass on a second try (module doc)."""
        attempt = 0
        while True:
            request = client.build_request(
                "POST",
                _parsed_url(self.url()),
                content=body,
                headers=self.headers(),
                timeout=self._timeout(),
            )
            with self._translated("connect to"):
                response = await client.send(request, stream=True)
            if response.is_success:
                return response
            try:
                with self._translated("read the error from"):
                    raw = await _read_bounded(response)
            finally:
                await response.aclose()
            status, message = response.status_code, self._error_message(response.status_code, raw)
            delay = self._retry_delay(attempt, status, raw, response.headers)
            if delay is None:
                error = HTTPStatusError(status, message, provider_code(raw), provider_param(raw))
                error.retry_after = retry_after(response.headers)
                raise error
            attempt += 1
            await asyncio.sleep(delay)

    async def _events(
        self,
        response: httpx2.Response,
        decoder: Decoder,
        tap: Tap | None,
        adapter: Adapter | None,
    ) -> AsyncGenerator[Event, None]:
        received = False
        failure: str | None = None
        chunks = body_chunks(response)
        try:
            async for chunk in chunks:
                received = received or bool(chunk)
                if tap is not None:
                    tap(chunk)
                events = decoder.feed(chunk)
                for event in adapter.events(events) if adapter else events:
                    yield event
        except httpx2.TimeoutException as e:
            if not received:
                raise TransportTimeoutError(self._timeout_text()) from e
            failure = f"{self.provider} stopped sending mid-response: {self._timeout_text()}"
        except httpx2.HTTPError as e:
            if not received:
                raise TransportError(f"the connection to {self._host()} failed: {_plain(e)}") from e
            failure = f"the connection to {self._host()} broke mid-response ({_plain(e)})"
        finally:
            await chunks.aclose()  # here, not when collected: by then its loop may be closed
        events = decoder.close()
        if failure is not None:
            events = _blame(events, failure)
        for event in adapter.events(events) if adapter else events:
            yield event

    def _timeout(self) -> httpx2.Timeout:
        s = self.settings
        return httpx2.Timeout(
            connect=s.connect_timeout,
            read=s.read_timeout,
            write=s.write_timeout,
            pool=s.connect_timeout,
        )

    # -- failures -----------------------------------------------------------------------

    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        """httpx exceptions before any body byte -> toolwire's transport errors."""
        try:
            yield
        except httpx2.ConnectTimeout as e:
            limit = self.settings.connect_timeout
            msg = f"could not connect to {self._host()} within {limit:g} s (connect_timeout)"
            raise TransportTimeoutError(msg) from e
        except httpx2.TimeoutException as e:
            raise TransportTimeoutError(self._timeout_text()) from e
        except httpx2.HTTPError as e:
            msg = f"cannot {doing} {self._host()}: {_plain(e)}; check base_url and the network"
            raise TransportError(msg) from e

    def _host(self) -> str:
        """Where the request goes, for messages: ``host:port``, never the ``user:password@``
        a ``base_url`` may carry."""
        return _host_of(self.url())

    def _timeout_text(self) -> str:
        return f"no data from {self._host()} for {self.settings.read_timeout:g} s (read_timeout)"

    def _error_message(self, status: int, raw: bytes) -> str:
        message = scrub(provider_message(raw) or reason(status), [self._api_key])
        if status in (401, 403) and self._api_key_env:
            message += f" (check the key in ${self._api_key_env})"
        elif status in (401, 403) and not self._api_key:
            message += " (no API key was sent: set api_key_env for this backend)"
        return message

    def _retry_delay(
        self, attempt: int, status: int, raw: bytes, headers: httpx2.Headers
    ) -> float | None:
        """Seconds to wait before the next try, or None when this error is final."""
        s = self.settings
        retryable = status == 429 or status >= 500 or b"overloaded_error" in raw
        if not retryable or attempt >= s.max_retries:
            return None
        asked = retry_after(headers)
        if asked is not None:
            return asked if asked <= s.max_retry_after else None
        ceiling = min(s.retry_max_delay, s.retry_base_delay * 2**attempt)
        # Jitter: clients that failed together (one overloaded server) come back spread out.
        return random.uniform(ceiling / 2, ceiling)


def _plain(exc: BaseException) -> str:
    # An httpx error may quote the request's URL, credentials and all.
    return mask_urls(one_line(str(exc))) or type(exc).__name__


def _blame(events: list[Event], failure: str) -> list[Event]:
    """The decoder's closing events after a transport failure, saying what really happened.

    The decoder only sees a body that stopped (and maybe a half event, reported as
    malformed); the failure is the cause, so it replaces those errors. A message that had
    already ended before the failure is left alone: nothing was lost.
    """
    if not any(isinstance(e, MessageEnd) for e in events):
        return events
    out: list[Event] = []
    for event in events:
        if isinstance(event, StreamError):
            continue
        if isinstance(event, ToolCallEnd) and event.error is not None:
            event = ToolCallEnd(event.id, None, f"the stream failed: {failure}", event.raw)
        elif isinstance(event, MessageEnd):
            out.append(StreamError(failure))
        out.append(event)
    return out


async def _read_bounded(response: httpx2.Response) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _MAX_ERROR_BODY:
            break
    return bytes(data[:_MAX_ERROR_BODY])


# ``json.dumps`` with these options makes an encoder per call: one serves every body.
_BODY_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@lru_cache(maxsize=64)
def _host_of(url: str) -> str:
    """``HTTPBackend._host`` of a backend sending to ``url`` (named in every request's
    rescue notice, so worked out once per URL)."""
    netloc = urlsplit(url).netloc
    return netloc.rpartition("@")[2] if netloc else mask_urls(url)


@lru_cache(maxsize=64)
def _parsed_url(url: str) -> httpx2.URL:
    """``url`` parsed once: a backend's endpoint is the same on every request, and an
    ``httpx2.URL`` is immutable."""
    return httpx2.URL(url)


__all__ = ["HTTPBackend"]

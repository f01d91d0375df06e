"""What every backend is: a ``ModelRequest`` in, normalized events out, as they decode.

A backend turns the provider-neutral history (``toolwire.history``) into one provider's
request body, POSTs it with httpx streaming, feeds the body bytes to the matching decoder
(``toolwire.decode``) and yields the events as they come. The contract a caller relies on:

* ``stream`` either raises a ``TransportError`` (``HTTPStatusError``,
  ``TransportTimeoutError``) before yielding anything, or yields events that end with
  exactly one ``MessageEnd``. A failure after the first body byte is never raised: it
  becomes ``ToolCallEnd`` errors for the open calls, a ``StreamError`` saying what happened
  in plain words, and ``MessageEnd("error")``, so the user keeps what was already decoded.
* Cancelling the consuming task, or calling ``aclose()`` on the iterator, closes the HTTP
  response at once.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from toolwire.config.choices import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RETRIES,
    DEFAULT_READ_TIMEOUT,
    PROVIDERS,
    TOOL_FORMATS,
    WIRE_FORMATS,
    Provider,
    ThoughtLevel,
    ToolFormat,
    WireFormat,
)
from toolwire.events import Event
from toolwire.history import Message, ToolSpec

if TYPE_CHECKING:  # the schema loads pydantic; a backend built in code does not need it
    from toolwire.config.schema import LimitsConfig

Tap: TypeAlias = Callable[[bytes], None]
"""Receives each raw body chunk as it arrives (after content decoding), e.g. a recorder."""


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """The answer must call a tool: the one named ``name``, or any of those offered
    (None). Without one (``ModelRequest.tool_choice`` None) the model chooses."""

    name: str | None = None


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """The answer is JSON text: any object (``schema`` None), or a value matching the
    JSON Schema ``schema``; ``name`` and ``strict`` as OpenAI's ``json_schema`` takes them."""

    schema: dict[str, Any] | None = None
    name: str = "response"
    strict: bool = False


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model turn: the system prompt, the history so far, the tools on offer.

    ``cache``: mark prompt-cache breakpoints where the provider wants them marked
    (Anthropic's ``cache_control``); the agent sets it, a relayed or one-off request
    does not (the proxy forwards the client's own markers). ``thinking``: how much the
    model is asked to think, mapped per provider (docs/backends.md, "Thinking"); ``off``
    adds nothing to the body. ``web_search``: see the field.
    """

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    temperature: float | None = None
    cache: bool = False
    thinking: ThoughtLevel = "off"
    web_search: bool = False
    """Offer the provider's own web search (Anthropic's ``web_search`` server tool, the
    Responses ``web_search`` tool, Gemini's ``google_search``); the agent sets it where
    ``BackendConfig.search_route`` says ``native``."""
    # What a proxy client asked of the answer (the agent sets none of them): each
    # builder sends them in its wire's own field, or says so in the system prompt where
    # the wire has none (docs/proxy.md, "What each dialect carries").
    tool_choice: ToolChoice | None = None
    stop: tuple[str, ...] = ()
    output: OutputFormat | None = None


@dataclass(frozen=True, slots=True)
class HTTPSettings:
    """Timeouts (seconds) and the retry policy of an HTTP backend.

    ``read_timeout`` bounds the wait for each piece of the body, not the whole response:
    a model may stream for minutes, but a silent connection is a dead one. Retries happen
    only before the first byte of a successful response (429, 5xx, Anthropic's 529 and
    ``overloaded_error``); ``retry-after`` is honoured up to ``max_retry_after``.
    """

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    write_timeout: float = 30.0
    max_retries: int = DEFAULT_MAX_RETRIES
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    max_retry_after: float = 60.0
    extra_headers: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def from_config(cls, limits: LimitsConfig) -> HTTPSettings:
        """The settings ``[limits]`` sets (``connect_timeout``, ``read_timeout``,
        ``max_retries``); the others as above."""
        return cls(
            connect_timeout=limits.connect_timeout,
            read_timeout=limits.read_timeout,
            max_retries=limits.max_retries,
        )


@runtime_checkable
class Backend(Protocol):
    """A model backend: ``name`` (its config name), ``provider``, ``model``, ``stream``."""

    name: str
    provider: str
    model: str

    def stream(self, request: ModelRequest) -> AsyncGenerator[Event, None]:
        """Send the request; yield the response's events as they decode (see module doc)."""
        ...


@runtime_checkable
class TappableBackend(Backend, Protocol):
    """A backend that can hand each raw body chunk to a tap (what the recorder wraps)."""

    @property
    def wire_format(self) -> WireFormat:
        """The wire format of the next response body (what a cassette line names)."""
        ...

    @property
    def tool_format(self) -> ToolFormat:
        """``native``, or the text markup tool calls are parsed out of."""
        ...

    def stream(
        self, request: ModelRequest, *, tap: Tap | None = None
    ) -> AsyncGenerator[Event, None]:
        """As ``Backend.stream``; ``tap`` receives each body chunk before it is decoded."""
        ...


class BackendWrapper:
    """The part every backend in front of another shares: ``inner``'s name, provider and
    model, and its formats read at each use (a replay's wire format moves on per
    response). A subclass adds ``stream``."""

    def __init__(self, inner: TappableBackend) -> None:
        self.inner = inner
        self.name, self.provider, self.model = inner.name, inner.provider, inner.model

    @property
    def wire_format(self) -> WireFormat:
        return self.inner.wire_format

    @property
    def tool_format(self) -> ToolFormat:
        return self.inner.tool_format


__all__ = [
    "PROVIDERS",
    "TOOL_FORMATS",
    "WIRE_FORMATS",
    "Backend",
    "BackendWrapper",
    "HTTPSettings",
    "ModelRequest",
    "OutputFormat",
    "Provider",
    "Tap",
    "TappableBackend",
    "ToolChoice",
    "ToolFormat",
    "WireFormat",
]

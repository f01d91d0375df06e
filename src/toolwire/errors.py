"""toolwire's exceptions, as one tree.

::

    ToolwireError
    ├── UsageError            our caller misused the API (a bug on the caller's side)
    │   └── LifecycleError    an illegal tool-call stage transition (a bug in toolwire)
    ├── ProtocolError         a peer broke its protocol (provider stream, ACP client)
    └── TransportError        the bytes did not arrive (network, HTTP status, timeout)
        ├── HTTPStatusError   the peer answered with an error status
        └── TransportTimeoutError the peer took too long

Decoders never raise ``ProtocolError`` through a stream: a malformed stream becomes a
``stream_error`` event (see ``events.py``), because a user watching an editor must still
see everything decoded before the fault. The exception types exist for adapters that
must stop (an HTTP backend that got a 401, an ACP peer that sent garbage on a request).
Third-party exceptions are translated at one boundary per adapter with ``raise ... from``.
"""

from __future__ import annotations


class ToolwireError(Exception):
    """Base of every exception toolwire raises on purpose."""


class UsageError(ToolwireError):
    """The API was called in a way it does not support (e.g. ``feed`` after ``close``)."""


class LifecycleError(UsageError):
    """A tool call was moved through an illegal stage transition."""


class ProtocolError(ToolwireError):
    """A peer (LLM provider, ACP client or agent) broke its protocol."""


class TransportError(ToolwireError):
    """Bytes could not be exchanged with a peer."""


class HTTPStatusError(TransportError):
    """The peer answered with an HTTP error status."""

    def __init__(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.code = code
        """The provider's error code or type when the body had one (``context_length_exceeded``)."""
        self.param = param
        """Where in the request the error is, when the body says (OpenAI's ``param``)."""
        self.retry_after: float | None = None
        """Seconds the peer asked to wait (``retry-after``), when it said."""


class TransportTimeoutError(TransportError):
    """The peer did not answer in time."""


__all__ = [
    "HTTPStatusError",
    "LifecycleError",
    "ProtocolError",
    "ToolwireError",
    "TransportError",
    "TransportTimeoutError",
    "UsageError",
]

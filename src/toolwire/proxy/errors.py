"""What the proxy answers with an error: an HTTP status, Anthropic's error ``type``, and a
one-line message (Anthropic's error shape: https://docs.anthropic.com/en/api/errors).

Every refusal raises one of these; the app turns it into the response in one place. The
message never carries a URL's credentials (``user:password@``, ``?key=``): an upstream's
``base_url`` may hold them, and the message goes to the client.
"""

from __future__ import annotations

from toolwire.secrets import mask_urls


class ProxyError(Exception):
    """A request answered with ``status`` and an Anthropic error of type ``kind``."""

    status = 500
    kind = "api_error"

    def __init__(self, message: str) -> None:
        self.message = mask_urls(" ".join(message.split()))  # one line, always
        super().__init__(self.message)


class BadRequestError(ProxyError):
    """The client's request is malformed; the message is the one-line reason."""

    status = 400
    kind = "invalid_request_error"


class UnauthorizedError(ProxyError):
    """The proxy's ``token`` is missing or wrong."""

    status = 401
    kind = "authentication_error"


class ForbiddenError(ProxyError):
    """A known credential asked for what only an admin may do."""

    status = 403
    kind = "permission_error"


class BodyTooLargeError(ProxyError):
    """The request body is over ``max_body_bytes``."""

    status = 413
    kind = "request_too_large"


class RequestTimeoutError(ProxyError):
    """The request body did not arrive within ``body_timeout``."""

    status = 408
    kind = "timeout_error"


class UpstreamError(ProxyError):
    """The upstream refused, could not be reached, or failed: its status and kind."""

    def __init__(self, status: int, kind: str, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.code = code
        """The upstream's own error code (``context_length_exceeded``), when it sent one:
        ``context.overflow`` reads it, as the agent does."""
        self.backend: str | None = None
        """The backend that answered so (its name goes in ``x-toolwire-backend``)."""
        self.retry_after: float | None = None
        """Seconds the upstream asked to wait (its ``retry-after``), when it said."""


class RateLimitedError(ProxyError):
    """Over a ``[proxy.limits]`` rate: answered with ``retry-after`` (whole seconds)."""

    status = 429
    kind = "rate_limit_error"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after: float | None = retry_after


__all__ = [
    "BadRequestError",
    "BodyTooLargeError",
    "ForbiddenError",
    "ProxyError",
    "RateLimitedError",
    "RequestTimeoutError",
    "UnauthorizedError",
    "UpstreamError",
]

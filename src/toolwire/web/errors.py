"""What a fetch fails with: ``ToolError``s, so the model reads them as the tool's result."""

from __future__ import annotations

from toolwire.tools.errors import ToolError


class FetchError(ToolError):
    """The page could not be fetched (network, HTTP status, deadline, type)."""


class RefusedError(FetchError):
    """The URL or an address it leads to is not one toolwire fetches from."""


__all__ = ["FetchError", "RefusedError"]

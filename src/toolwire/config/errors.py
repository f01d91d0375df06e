"""``ConfigError``: its own leaf, so catching it loads neither the schema nor pydantic."""

from __future__ import annotations

from toolwire.errors import ToolwireError


class ConfigError(ToolwireError):
    """The configuration is invalid; the message is one line saying where and what to do."""


__all__ = ["ConfigError"]

"""``ConfigError``: its own leaf, so catching it loads neither the schema nor pydantic."""

from __future__ import annotations

from toolwire.errors import ToolwireError


class ConfigError(ToolwireError):
    """The configuration is invalid; the message is one line saying where and what to do.
    ``key``: the dotted path of the key at fault in the file, when one is (its line is
    looked up from it)."""

    def __init__(self, message: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.key = key


__all__ = ["ConfigError"]

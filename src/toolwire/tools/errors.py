"""The failures a tool reports to the model as error results (not bugs in toolwire).

A leaf module, so the path checks, the context and the tool base can all raise them
without importing one another.
"""

from __future__ import annotations


class ToolError(Exception):
    """A failure to report to the model as an error result (not a bug)."""


class PathRefusedError(ToolError):
    """The path lies outside the session's directories."""


__all__ = ["PathRefusedError", "ToolError"]

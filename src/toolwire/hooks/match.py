"""Which tool names a group's ``matcher`` selects, as Claude Code decides it.

Empty, missing or ``*``: every tool. Only letters, digits, ``_`` and ``|``: exact names
(``Edit|Write`` is two of them), so ``Bash`` never selects a tool that merely contains
it. Anything else is a regular expression searched in the name (``mcp__github__.*``,
``Notebook.*``); one that does not compile selects nothing rather than everything.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

_PLAIN: Final = re.compile(r"^[A-Za-z0-9_|]+$")


def matches(matcher: str | None, tool_name: str | None) -> bool:
    """Whether ``matcher`` selects ``tool_name`` (None: an event without tools: all)."""
    if not matcher or matcher == "*" or tool_name is None:
        return True
    if _PLAIN.match(matcher):
        return tool_name in matcher.split("|")
    pattern = _compiled(matcher)
    return pattern is not None and pattern.search(tool_name) is not None


@cache
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None


__all__ = ["matches"]

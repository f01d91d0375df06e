"""Reading a tool's arguments as the model sent them, leniently where it is harmless.

Models sometimes send a number as a string (``"offset": "10"``) or a boolean as
``"true"``; those are accepted. A missing required argument or a value of the wrong
kind raises ``ToolError`` with a message the model can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.tools.errors import ToolError


def required_str(args: Mapping[str, Any], key: str, *, allow_empty: bool = True) -> str:
    """The string argument ``key``; an error when missing, not a string, or empty."""
    value = args.get(key)
    if value is None:
        raise ToolError(f"Missing required argument {key!r}.")
    if not isinstance(value, str):
        raise ToolError(f"Argument {key!r} must be a string, got {_kind(value)}.")
    if not allow_empty and not value:
        raise ToolError(f"Argument {key!r} must not be empty.")
    return value


def optional_str(args: Mapping[str, Any], key: str) -> str | None:
    """The string argument ``key``, or None when absent, null or empty."""
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"Argument {key!r} must be a string, got {_kind(value)}.")
    return value


def optional_int(
    args: Mapping[str, Any], key: str, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    """The integer argument ``key`` (an integral float or digit string is accepted)."""
    value = args.get(key)
    if value is None or value == "":
        return None
    number = _as_int(value)
    if number is None:
        raise ToolError(f"Argument {key!r} must be an integer, got {_kind(value)}.")
    if minimum is not None and number < minimum:
        raise ToolError(f"Argument {key!r} must be at least {minimum}, got {number}.")
    if maximum is not None and number > maximum:
        raise ToolError(f"Argument {key!r} must be at most {maximum}, got {number}.")
    return number


def optional_number(args: Mapping[str, Any], key: str, *, minimum: float = 0) -> float | None:
    """The number argument ``key`` (a numeric string is accepted)."""
    value = args.get(key)
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise ToolError(f"Argument {key!r} must be a number, got {_kind(value)}.") from None
    if not number >= minimum:  # also refuses NaN
        raise ToolError(f"Argument {key!r} must be at least {minimum:g}, got {value}.")
    return number


def optional_bool(args: Mapping[str, Any], key: str, *, default: bool = False) -> bool:
    """The boolean argument ``key`` (``"true"``/``"false"`` strings are accepted)."""
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ToolError(f"Argument {key!r} must be true or false, got {_kind(value)}.")


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", bool: "a boolean", str: "a string"}
    for cls, name in names.items():
        if isinstance(value, cls):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


__all__ = ["optional_bool", "optional_int", "optional_number", "optional_str", "required_str"]

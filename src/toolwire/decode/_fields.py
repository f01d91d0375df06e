"""Typed reads of provider JSON: a field of the wrong type reads as absent, never raises.

Provider payloads are untrusted input: a decoder must survive ``"delta": null`` or
``"index": "0"`` with a clean result, not a ``TypeError`` in the middle of a stream.
"""

from __future__ import annotations

from typing import Any


def get_dict(obj: Any, key: str) -> dict[str, Any]:
    """``obj[key]`` if ``obj`` is a dict and the value is a dict, else ``{}``."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def get_str(obj: dict[str, Any], key: str) -> str:
    """``obj[key]`` if it is a string, else ``""``."""
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def get_int(obj: dict[str, Any], key: str) -> int | None:
    """``obj[key]`` if it is an integer (not a bool), else ``None``."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None

"""Qwen3-Coder parameter values typed by the tool's JSON schema, as vLLM and SGLang do.

A value is raw text. With a schema, a type other than ``string`` reads the text as JSON,
else as a Python literal (models trained on Python write ``{'key': 'value'}`` and
``True``), and a JSON string that holds such a value once more (a double-encoded object).
``ast.literal_eval`` reads literals only: nothing the model wrote is run. A reading that
does not fit a declared type is dropped, so the text stays for the tool to refuse.
"""

from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import SPACE


def convert(raw: str, schema: Any) -> Any:
    """Type a value by its JSON schema, as the production parsers do (docs/decoding.md):

    * ``null`` (or Python's ``None``) is JSON null where the schema allows null
      (``anyOf [string, null]``, ``type: [string, null]``) and for every type but string;
    * a string type keeps the text; otherwise the text is read as JSON, else as a Python
      literal (``{'key': 'value'}``, ``True``), and a JSON string holding such a value is
      read once more (a double-encoded object); the first reading that fits a declared
      type is the value, so an integer parameter written ``2.5`` stays the text for the
      tool to refuse.
    """
    types = _types(schema)
    if not types:
        return raw
    text = raw.strip(SPACE)
    if text in ("null", "None") and ("null" in types or "string" not in types):
        return None
    if "string" in types:
        return raw
    value = _read(text)
    if value is not _UNREAD and _fits(value, types):
        return value
    if isinstance(value, str):
        inner = _read(value.strip(SPACE))
        if inner is not _UNREAD and _fits(inner, types):
            return inner
    return raw


_UNREAD = object()
_LITERAL_START = tuple("{['\"")


def read_literal(text: str) -> Any:
    """``text`` as JSON or a Python literal of JSON's kinds (nothing is run); None when it
    is neither (a literal ``None`` is None too: the caller tells them apart)."""
    value = _read(text)
    return None if value is _UNREAD else value


def _read(text: str) -> Any:
    """``text`` as JSON, else as a Python literal of JSON's kinds; ``_UNREAD`` if neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    if text in ("True", "False"):
        return text == "True"
    if not text.startswith(_LITERAL_START):
        return _UNREAD
    try:
        # Literals only, nothing is run; a nesting too deep is a SyntaxError. The compiler's
        # warnings (``1a``, ``"\\d"``) would reach the agent's stderr: they are not ours.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNREAD
    return value if _is_json(value) else _UNREAD


def _is_json(value: Any) -> bool:
    """Whether a literal is made of JSON's kinds only (no tuple, set, bytes or complex)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


# Type names that are not JSON Schema's but that tool schemas written from Python or
# other languages carry; the peers read them as these (vLLM maps "float" to a number).
_ALIASES = {
    "float": "number",
    "double": "number",
    "int": "integer",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
}


def _types(schema: Any) -> frozenset[str]:
    if not isinstance(schema, Mapping):
        return frozenset()
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset({_ALIASES.get(declared, declared)})
    if isinstance(declared, list):
        return frozenset(_ALIASES.get(t, t) for t in declared if isinstance(t, str))
    alternatives = schema.get("anyOf") or schema.get("oneOf") or []
    return frozenset().union(*(_types(s) for s in alternatives))


_FITS: dict[str, Callable[[Any], bool]] = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _fits(value: Any, types: frozenset[str]) -> bool:
    return any(_FITS.get(t, lambda _: False)(value) for t in types)


def typed_element(value: Any, schema: Any) -> Any:
    """An XML element's value (text, a list of repeats, or an object of children) typed by
    its JSON schema: text as ``convert`` types it, a single element of an array as a
    one-item list, an object's members and an array's items by their own schemas."""
    types = _types(schema)
    if not types or "string" in types:
        return value
    if isinstance(value, str):
        converted = convert(value, schema)
        if converted is not value or "array" not in types:
            return converted
    if "array" in types:
        items = schema.get("items") if isinstance(schema, Mapping) else None
        return [typed_element(v, items) for v in (value if isinstance(value, list) else [value])]
    if isinstance(value, dict) and isinstance(schema, Mapping):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        return {k: typed_element(v, props.get(k)) for k, v in value.items()}
    return value


__all__ = ["convert", "read_literal", "typed_element"]

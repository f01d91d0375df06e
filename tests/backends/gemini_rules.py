"""What Gemini refuses in ``tools[].functionDeclarations[]``, as a checker (no network).

Written from Google's documentation of the v1beta ``FunctionDeclaration`` and ``Schema``
objects, and from the 400 answers the API is documented (and reported) to give:

* ``Schema`` is a select subset of OpenAPI 3.0: a field outside it is refused with
  ``Unknown name "X" ... Cannot find field`` (``$schema``, ``additionalProperties``,
  ``$ref``, ``$defs``, ``const``, ``examples``, ``oneOf``, ...);
* ``type`` is one of the ``Type`` names (one value, not a list); a schema without
  ``type`` is refused unless it is an ``anyOf``;
* ``items: missing field`` for an ARRAY; ``properties: should be non-empty for OBJECT
  type``; ``properties``/``required`` only for OBJECT; ``enum: only allowed for STRING
  type``; every ``required`` name must be a defined property;
* ``format``: STRING ``enum`` or ``date-time``; NUMBER ``float`` or ``double``; INTEGER
  ``int32`` or ``int64`` (Firebase's Schema reference: other string formats fail);
* a function name starts with a letter or ``_``, then letters, digits, ``_ . : -``, at
  most 64 characters; ``parameters`` and ``parametersJsonSchema`` exclude each other,
  and the latter describes an object.

``request_violations`` checks a whole ``generateContent`` body, so a fake Gemini server
can answer 400 with these messages. ``CONSERVATIVE`` narrows the fields to those every
Gemini version has accepted (``title``, ``default``, ``example``, ``pattern`` and
``propertyOrdering`` were refused by some): what toolwire itself emits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

DOCUMENTED = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
CONSERVATIVE = DOCUMENTED - {"title", "default", "example", "pattern", "propertyOrdering"}
TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
FORMATS = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}
NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
_COUNTS = ("maxItems", "minItems", "minProperties", "maxProperties", "minLength", "maxLength")


def request_violations(
    body: Mapping[str, Any], *, allowed: frozenset[str] = DOCUMENTED
) -> list[str]:
    """Every rule a ``generateContent`` body's tools break, in Gemini's wording."""
    out: list[str] = []
    for t, tool in enumerate(body.get("tools") or []):
        for d, declaration in enumerate(tool.get("functionDeclarations") or []):
            where = f"GenerateContentRequest.tools[{t}].function_declarations[{d}]"
            out += declaration_violations(declaration, where, allowed=allowed)
    return out


def declaration_violations(
    declaration: Mapping[str, Any],
    where: str = "declaration",
    *,
    allowed: frozenset[str] = DOCUMENTED,
) -> list[str]:
    out: list[str] = []
    name = declaration.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        out.append(f"{where}.name: invalid function name {name!r}")
    if not isinstance(declaration.get("description", ""), str):
        out.append(f"{where}.description: not a string")
    if "parameters" in declaration and "parametersJsonSchema" in declaration:
        out.append(f"{where}: parameters and parametersJsonSchema are mutually exclusive")
    if "parameters" in declaration:
        out += schema_violations(declaration["parameters"], f"{where}.parameters", allowed)
    if "parametersJsonSchema" in declaration:
        schema = declaration["parametersJsonSchema"]
        if not isinstance(schema, dict) or schema.get("type") != "object":
            out.append(f"{where}.parameters_json_schema: must describe an object")
    return out


def schema_violations(node: Any, where: str, allowed: frozenset[str] = DOCUMENTED) -> list[str]:
    """The rules one ``Schema`` (and everything under it) breaks."""
    if not isinstance(node, dict):
        return [f"{where}: not a Schema object"]
    out = [
        f"Invalid JSON payload received. Unknown name \"{k}\" at '{where}': Cannot find field."
        for k in node
        if k not in allowed
    ]
    kind = node.get("type")
    upper = kind.upper() if isinstance(kind, str) else None
    if kind is None and "anyOf" not in node:
        out.append(f"{where}.type: must be specified")
    elif kind is not None and upper not in TYPES:
        out.append(f"{where}.type: invalid value {kind!r}")
    out += _object_rules(node, where, upper, allowed)
    out += _array_rules(node, where, upper, allowed)
    out += _value_rules(node, where, upper)
    if "anyOf" in node:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            out.append(f"{where}.any_of: must be a non-empty list")
        else:
            for i, branch in enumerate(branches):
                out += schema_violations(branch, f"{where}.any_of[{i}]", allowed)
    out += _scalar_rules(node, where)
    return out


def _object_rules(
    node: dict[str, Any], where: str, upper: str | None, allowed: frozenset[str]
) -> list[str]:
    out: list[str] = []
    properties = node.get("properties")
    if upper == "OBJECT" and (not isinstance(properties, dict) or not properties):
        out.append(f"{where}.properties: should be non-empty for OBJECT type")
    if upper != "OBJECT":
        out += [
            f"{where}.{k}: only allowed for OBJECT type"
            for k in ("properties", "required")
            if k in node
        ]
    if isinstance(properties, dict):
        for name, sub in properties.items():
            out += schema_violations(sub, f"{where}.properties[{name}]", allowed)
    required = node.get("required", [])
    if not isinstance(required, list):
        out.append(f"{where}.required: not a list")
    else:
        defined = properties if isinstance(properties, dict) else {}
        out += [
            f"{where}.required[{i}]: property is not defined"
            for i, r in enumerate(required)
            if r not in defined
        ]
    return out


def _array_rules(
    node: dict[str, Any], where: str, upper: str | None, allowed: frozenset[str]
) -> list[str]:
    out: list[str] = []
    if upper == "ARRAY" and "items" not in node:
        out.append(f"{where}.items: missing field.")
    if upper != "ARRAY" and "items" in node:
        out.append(f"{where}.items: only allowed for ARRAY type")
    if "items" in node:
        out += schema_violations(node["items"], f"{where}.items", allowed)
    return out


def _value_rules(node: dict[str, Any], where: str, upper: str | None) -> list[str]:
    out: list[str] = []
    if "enum" in node:
        enum = node["enum"]
        if upper != "STRING":
            out.append(f"{where}.enum: only allowed for STRING type")
        elif not isinstance(enum, list) or not enum or not all(isinstance(v, str) for v in enum):
            out.append(f"{where}.enum: must be a non-empty list of strings")
    fmt = node.get("format")
    if fmt is not None and fmt not in FORMATS.get(upper or "", ()):
        out.append(f"{where}.format: {fmt!r} is not supported for {upper} type")
    return out


def _scalar_rules(node: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    if "nullable" in node and not isinstance(node["nullable"], bool):
        out.append(f"{where}.nullable: not a boolean")
    for key in ("description", "title", "pattern"):
        if key in node and not isinstance(node[key], str):
            out.append(f"{where}.{key}: not a string")
    for key in _COUNTS:
        value = node.get(key)
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool)):
            out.append(f"{where}.{key}: not an integer")
    for key in ("minimum", "maximum"):
        value = node.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            out.append(f"{where}.{key}: not a number")
    return out


def property_names(node: Any) -> set[str]:
    """Every name under a ``properties`` map, at any depth (``anyOf`` and ``items`` too)."""
    names: set[str] = set()
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
            for sub in properties.values():
                names |= property_names(sub)
        for key in ("items", "additionalProperties"):
            names |= property_names(node.get(key))
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or []:
                names |= property_names(sub)
    return names


__all__ = [
    "CONSERVATIVE",
    "DOCUMENTED",
    "declaration_violations",
    "property_names",
    "request_violations",
    "schema_violations",
]

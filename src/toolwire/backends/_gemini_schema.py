"""Tool input schemas for Gemini: the OpenAPI subset of ``parameters`` (pure functions).

Gemini's ``FunctionDeclaration.parameters`` is a ``Schema``, a select subset of OpenAPI
3.0, and the API answers 400 to an unknown field or a broken subset rule (the rules and
their sources: docs/backends.md, "Tool schemas per provider"). A JSON Schema is
converted: references inlined, ``allOf`` merged, ``oneOf`` read as ``anyOf``, type lists
with ``null`` as ``nullable``, ``const`` as a one-value enum; what the subset cannot say
(a format it does not know, a pattern, a default, examples) moves into the description,
so the model still reads it. Every property name is kept.

A few shapes have no form in the subset: an object without properties (a free-form
map), an array without ``items``, a value of any type, a recursive reference. Such a
tool goes as ``parametersJsonSchema`` instead, the JSON Schema field of the same
declaration (v1beta), which the endpoint toolwire calls accepts.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.backends._schema import (
    Schema,
    local_target,
    merge_all_of,
    object_schema,
    types_of,
    with_note,
)

MAX_DEPTH = 32
"""Deeper nesting than this is treated as inexpressible (it only comes from generators)."""
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
_COUNTS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}
_BOUNDS = ("minimum", "maximum")
_META = ("$schema", "$id", "$comment")
_DESCRIBING = ("description", "title", "default", "examples")


class InexpressibleError(Exception):
    """The schema has a shape the OpenAPI subset cannot describe."""


def declaration_schema(schema: Any) -> tuple[str, Schema] | None:
    """``("parameters", subset)``, ``("parametersJsonSchema", schema)`` or None (no input)."""
    top = object_schema(schema, flatten_top=True)
    if not _has_input(top):
        return None
    try:
        subset = to_subset(top)
    except InexpressibleError:
        subset = None
    if subset is None or subset.get("type") != "object":
        return "parametersJsonSchema", {k: v for k, v in top.items() if k not in _META}
    return "parameters", subset


def to_subset(schema: Schema) -> Schema:
    """The OpenAPI-subset form of an object schema; ``InexpressibleError`` if there is none."""
    return _Converter(schema).convert(schema, (), 0)


def _has_input(top: Schema) -> bool:
    # An object that names no property and allows no described extra keys takes no
    # input; Gemini wants ``parameters`` left out then (an empty OBJECT is refused).
    extra = top.get("additionalProperties")
    combined = any(k in top for k in ("anyOf", "oneOf", "allOf", "$ref"))
    return bool(top.get("properties")) or isinstance(extra, dict) or combined


class _Converter:
    def __init__(self, root: Schema) -> None:
        self.root = root

    def convert(self, node: Any, refs: tuple[str, ...], depth: int) -> Schema:
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            raise InexpressibleError("not a schema, or nested too deep")
        if "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or ref in refs:
                raise InexpressibleError(f"recursive reference {ref!r}")
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return self.convert({**self.resolve(ref), **siblings}, (*refs, ref), depth + 1)
        if isinstance(node.get("allOf"), list):
            merged = merge_all_of(node)
            if merged is None:
                raise InexpressibleError("a composed allOf branch")
            return self.convert(merged, refs, depth + 1)
        branches = node.get("anyOf", node.get("oneOf"))
        if isinstance(branches, list):
            return self.union(node, branches, refs, depth)
        types = types_of(node) or _inferred_types(node)
        real = [t for t in types if t != "null"]
        if any(t not in TYPES for t in real):
            raise InexpressibleError(f"unknown type in {types!r}")
        if len(real) > 1:
            common = {k: v for k, v in node.items() if k not in _DESCRIBING}
            split = [{**common, "type": t} for t in real]
            out = self.union({**node, "type": None}, split, refs, depth)
        elif real:
            out = self.typed(node, real[0], refs, depth)
        elif types:  # only null: a value that may only be null
            out = {"type": "string"}
        else:
            raise InexpressibleError("a value of any type")
        if "null" in types or _enum_has_null(node):
            out["nullable"] = True
        return out

    def resolve(self, ref: str) -> Schema:
        target = self.root if ref == "#" else local_target(self.root, ref)
        if target is None:
            raise InexpressibleError(f"unresolvable reference {ref!r}")
        return target

    def union(self, node: Schema, branches: list[Any], refs: tuple[str, ...], depth: int) -> Schema:
        shared = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "type")}
        nullable = False
        kept: list[Schema] = []
        for branch in branches:
            if isinstance(branch, dict) and types_of(branch) == ["null"]:
                nullable = True
                continue
            if isinstance(branch, dict) and node.get("type") and "type" not in branch:
                branch = {"type": node["type"], **branch}
            kept.append(self.convert(branch, refs, depth + 1))
        if not kept:
            out: Schema = {"type": "string"}
        elif len(kept) == 1:
            out = kept[0]
        else:
            out = {"anyOf": kept}
        out = {**out, **_notes(shared, out)}
        if nullable:
            out["nullable"] = True
        return out

    def typed(self, node: Schema, kind: str, refs: tuple[str, ...], depth: int) -> Schema:
        out: Schema = {"type": kind}
        if kind == "object":
            out.update(self.object_fields(node, refs, depth))
        elif kind == "array":
            items = node.get("items")
            if not isinstance(items, dict) or "prefixItems" in node:
                raise InexpressibleError("an array without one items schema")
            out["items"] = self.convert(items, refs, depth + 1)
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in FORMATS.get(kind, ()):
            out["format"] = fmt
        for key in _COUNTS.get(kind, ()):
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out[key] = value
        for key in _BOUNDS if kind in ("number", "integer") else ():
            value = node.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                out[key] = value
        strings = [v for v in _enum(node) or [] if isinstance(v, str)]
        if strings and kind == "string":
            out["enum"] = strings
        return {**out, **_notes(node, out)}

    def object_fields(self, node: Schema, refs: tuple[str, ...], depth: int) -> Schema:
        properties = node.get("properties")
        if not isinstance(properties, dict) or not properties:
            raise InexpressibleError("an object without properties")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            raise InexpressibleError("described extra properties")
        converted = {k: self.convert(v, refs, depth + 1) for k, v in properties.items()}
        listed = node.get("required")
        names = listed if isinstance(listed, list) else []
        required = [r for r in names if isinstance(r, str) and r in converted]
        fields: Schema = {"properties": converted}
        if required:
            fields["required"] = list(dict.fromkeys(required))
        return fields


def _inferred_types(node: Schema) -> list[str]:
    """The type a schema without ``type`` implies, from its other keywords."""
    values = _enum(node)
    if values:
        kinds = [_json_type(v) for v in values]
        known = [k for k in kinds if k is not None]
        return sorted(set(known)) if len(known) == len(kinds) else []
    if "properties" in node:
        return ["object"]
    if "items" in node:
        return ["array"]
    return []


def _json_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None  # arrays and objects have no enum form here


def _enum(node: Schema) -> list[Any] | None:
    if "const" in node:
        return [node["const"]]
    values = node.get("enum")
    return values if isinstance(values, list) else None


def _enum_has_null(node: Schema) -> bool:
    values = _enum(node)
    return values is not None and None in values


def _notes(node: Schema, out: Schema) -> Schema:
    """The description, with what the subset could not carry appended to it."""
    description = node.get("description")
    if not isinstance(description, str) or not description:
        title = node.get("title")
        description = title if isinstance(title, str) else ""
    notes: Schema = {"description": description} if description else {}
    lost: list[str] = []
    fmt = node.get("format")
    if isinstance(fmt, str) and "format" not in out:
        lost.append(f"format: {fmt}")
    if isinstance(node.get("pattern"), str):
        lost.append(f"pattern: {node['pattern']}")
    enum = _enum(node)
    if enum is not None and "enum" not in out and "anyOf" not in out:
        shown = ", ".join(_text(v) for v in enum if v is not None)
        if shown:
            lost.append(f"one of: {shown}")
    if "default" in node:
        lost.append(f"default: {_text(node['default'])}")
    examples = node.get("examples")
    if isinstance(examples, list) and examples:
        lost.append(f"example: {_text(examples[0])}")
    for note in lost:
        notes = with_note(notes, note)
    return notes


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


__all__ = ["FORMATS", "MAX_DEPTH", "TYPES", "InexpressibleError", "declaration_schema", "to_subset"]

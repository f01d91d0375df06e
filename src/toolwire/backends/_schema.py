"""Tool input schemas as Anthropic and the OpenAI APIs accept them (pure functions).

MCP servers and Claude Code send full JSON Schemas; these providers take JSON Schema too
but refuse a few shapes (docs/backends.md, "Tool schemas per provider", with sources).
Each function returns its argument itself when nothing needs changing, so a valid schema
(every built-in tool's) is sent byte for byte as before and the prompt cache holds.
Gemini's subset is ``_gemini_schema``'s.

A schema is data from a server, so every walk here is bounded: ``$ref`` loops are cut
where a reference already being expanded comes back, and nesting past ``MAX_DEPTH``
subschemas is loosened to ``{}`` (any value) before any recursive walk sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]

MAX_DEPTH = 64
"""Subschemas deeper than this become ``{}``: only generators and attacks nest so deep,
and every recursive walk (ours, ``json.dumps``, the provider's) must stay far from
Python's recursion limit."""
MAX_VALUE_DEPTH = 32
"""A keyword value that is not a subschema (``default``, ``enum``, ``x-...``) nested
deeper than this is dropped."""

# Keywords whose value is one subschema, a list of them, or a map of names to them.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_SUBSCHEMA_KEYS = frozenset((*_ONE, *_LIST, *_MAP))


def map_subschemas(node: Schema, visit: Callable[[Schema], Schema]) -> Schema:
    """``node`` with ``visit`` applied to each direct subschema; ``node`` if none changed."""
    changes: dict[str, Any] = {}
    for key in _ONE:
        sub = node.get(key)
        if isinstance(sub, dict):
            new = visit(sub)
            if new is not sub:
                changes[key] = new
        elif key == "items" and isinstance(sub, list):  # draft 4-7 tuple form
            new_list = [visit(s) if isinstance(s, dict) else s for s in sub]
            if any(a is not b for a, b in zip(new_list, sub, strict=True)):
                changes[key] = new_list
    for key in _LIST:
        subs = node.get(key)
        if isinstance(subs, list):
            new_list = [visit(s) if isinstance(s, dict) else s for s in subs]
            if any(a is not b for a, b in zip(new_list, subs, strict=True)):
                changes[key] = new_list
    for key in _MAP:
        subs = node.get(key)
        if isinstance(subs, dict):
            new_map = {k: visit(s) if isinstance(s, dict) else s for k, s in subs.items()}
            if any(new_map[k] is not subs[k] for k in subs):
                changes[key] = new_map
    return {**node, **changes} if changes else node


def types_of(node: Schema) -> list[str]:
    """The node's ``type`` as a list (``[]`` when it names none)."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def object_schema(schema: Any, *, flatten_top: bool = False) -> Schema:
    """``schema`` with ``type: "object"`` at the top, as both APIs require.

    A schema that names another type at the top (MCP requires objects; a server that
    breaks the rule) becomes an object without properties. ``flatten_top``: Anthropic
    refuses ``anyOf``/``oneOf``/``allOf`` at the top level, so they are merged into one
    object (the union of the branches' properties; required only where all require it).
    """
    if not isinstance(schema, dict) or not schema:
        return empty_object()
    top: Schema = bounded(schema)
    types = types_of(top)
    if types and "object" not in types:
        return empty_object()
    if flatten_top and any(k in top for k in _COMBINATORS):
        top = _flatten(top, top, frozenset(), 0)
    if top.get("type") == "object":
        return top
    return {"type": "object", **{k: v for k, v in top.items() if k != "type"}}


def empty_object() -> Schema:
    """A new object schema without properties (callers may extend it)."""
    return {"type": "object", "properties": {}}


def with_properties(schema: Schema) -> Schema:
    """An object schema with a ``properties`` map (OpenAI-compatible servers want one)."""
    return schema if isinstance(schema.get("properties"), dict) else {**schema, "properties": {}}


def fill_items(node: Schema) -> Schema:
    """Every array schema given ``items``: OpenAI refuses ``{"type": "array"}`` alone."""
    node = map_subschemas(node, fill_items)
    if "array" in types_of(node) and "items" not in node and "prefixItems" not in node:
        return {**node, "items": {}}
    return node


def drop_patterns(node: Schema) -> Schema:
    """``pattern`` moved into the description: llama.cpp's grammar builder fails on some."""
    node = map_subschemas(node, drop_patterns)
    pattern = node.get("pattern")
    if not isinstance(pattern, str):
        return node
    rest = {k: v for k, v in node.items() if k != "pattern"}
    return with_note(rest, f"Pattern: {pattern}")


def with_note(node: Schema, note: str) -> Schema:
    """``note`` appended to the node's description (what a dropped keyword said)."""
    description = node.get("description")
    text = f"{description} ({note})" if isinstance(description, str) and description else note
    return {**node, "description": text}


def local_target(root: Schema, ref: Any) -> Schema | None:
    """The subschema a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) points at."""
    if not isinstance(ref, str):
        return None
    for prefix in ("#/$defs/", "#/definitions/"):
        defs = root.get(prefix[2:-1])
        if ref.startswith(prefix) and isinstance(defs, dict):
            target = defs.get(ref.removeprefix(prefix))
            return target if isinstance(target, dict) else None
    return None


def bounded(schema: Schema) -> Schema:
    """``schema`` itself when it nests less than ``MAX_DEPTH`` subschemas; else a copy
    whose deeper subschemas are ``{}`` and whose too deep other values are dropped."""
    return _bound(schema, 0) if _depth_exceeds(schema, MAX_DEPTH) else schema


def _bound(node: Schema, depth: int) -> Schema:
    if depth >= MAX_DEPTH:
        return {}
    node = map_subschemas(node, lambda sub: _bound(sub, depth + 1))
    deep = [k for k, v in node.items() if _deep_value(k, v)]
    return {k: v for k, v in node.items() if k not in deep} if deep else node


def _deep_value(key: str, value: Any) -> bool:
    """A keyword whose value, outside the subschemas ``_bound`` walks, nests too deep."""
    if key not in _SUBSCHEMA_KEYS:
        return _depth_exceeds(value, MAX_VALUE_DEPTH)
    if isinstance(value, dict) and key in _MAP:
        parts = list(value.values())
    elif isinstance(value, list):
        parts = value
    else:
        return False
    return any(not isinstance(p, dict) and _depth_exceeds(p, MAX_VALUE_DEPTH) for p in parts)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` containers (without recursing)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
    return False


def _flatten(schema: Schema, root: Schema, expanding: frozenset[str], depth: int) -> Schema:
    """The top-level combinators merged into the object itself (see ``object_schema``).

    ``expanding``: the references being expanded on the way here; one that comes back is
    a loop, and that branch adds nothing (the schema is loosened, never expanded forever).
    """
    out: Schema = {k: v for k, v in schema.items() if k not in _COMBINATORS}
    given = out.get("properties")
    properties: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    listed = out.get("required")
    required: list[Any] = list(listed) if isinstance(listed, list) else []
    for key in _COMBINATORS:
        branches = [_branch(b, root, expanding) for b in _dicts(schema.get(key))]
        if not branches:
            continue
        flat = [
            _flatten(b, root, expanding | refs, depth + 1)
            if depth < MAX_DEPTH and any(k in b for k in _COMBINATORS)
            else b
            for b, refs in branches
        ]
        for branch in flat:
            branch_properties = branch.get("properties")
            if isinstance(branch_properties, dict):
                for name, sub in branch_properties.items():
                    properties.setdefault(name, sub)
        sets = [{r for r in _listing(b.get("required")) if isinstance(r, str)} for b in flat]
        # allOf: each branch's requirements hold; anyOf/oneOf: only the shared ones.
        both = set.union(*sets) if key == "allOf" else set.intersection(*sets)
        required += [
            n for b in flat for n in _listing(b.get("required")) if isinstance(n, str) and n in both
        ]
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(dict.fromkeys(required))
    return out


def _branch(
    branch: Schema, root: Schema, expanding: frozenset[str]
) -> tuple[Schema, frozenset[str]]:
    """A branch with its local reference resolved, and the references that took."""
    ref = branch.get("$ref")
    if not isinstance(ref, str):
        return branch, frozenset()
    if ref in expanding:
        return {}, frozenset()
    target = local_target(root, ref)
    return (target, frozenset({ref})) if target is not None else (branch, frozenset())


def merge_all_of(node: Schema) -> Schema | None:
    """``allOf`` folded into its node (every branch's properties and requirements).

    None when a branch is itself a reference or a combinator, or when branches disagree
    on ``type`` (no one node says both): folding those is the caller's choice (Gemini's
    converter sends such a tool as JSON Schema, which keeps every branch).
    """
    out = {k: v for k, v in node.items() if k != "allOf"}
    given = out.get("properties")
    properties: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    required: list[Any] = list(_listing(out.get("required")))
    for branch in _dicts(node.get("allOf")):
        if any(k in branch for k in ("$ref", *_COMBINATORS)):
            return None
        for key, value in branch.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    properties.setdefault(name, sub)
            elif key == "required" and isinstance(value, list):
                required += value
            elif key == "type" and "type" in out and out["type"] != value:
                return None
            else:
                out.setdefault(key, value)
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(dict.fromkeys(r for r in required if isinstance(r, str)))
    return out


def _listing(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[Schema]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


__all__ = [
    "MAX_DEPTH",
    "Schema",
    "bounded",
    "drop_patterns",
    "empty_object",
    "fill_items",
    "local_target",
    "map_subschemas",
    "merge_all_of",
    "object_schema",
    "types_of",
    "with_note",
    "with_properties",
]

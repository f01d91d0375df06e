"""Arbitrary JSON Schemas, adapted per provider, always pass that provider's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends import gemini_rules, tool_rules
from toolwire.backends._gemini_schema import declaration_schema
from toolwire.backends._schema import object_schema
from toolwire.backends.openai_chat import parameters

TYPES = ["string", "number", "integer", "boolean", "array", "object", "null"]
NAMES = st.text(min_size=1, max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6)
FORMATS = st.sampled_from(["date-time", "date", "email", "uri", "uuid", "int32", "float", "enum"])


def _annotations() -> st.SearchStrategy[dict[str, Any]]:
    """Keywords that describe rather than shape: any of them may appear on any node."""
    return st.fixed_dictionaries(
        {},
        optional={
            "description": st.text(max_size=20),
            "title": st.text(max_size=8),
            "default": SCALARS,
            "examples": st.lists(SCALARS, max_size=2),
            "format": FORMATS,
            "pattern": st.sampled_from(["^a", "\\d+", "^[a-z]+$"]),
            "$comment": st.text(max_size=5),
            "minLength": st.integers(0, 3),
            "maximum": st.integers(0, 100) | st.floats(0, 1),
            "minItems": st.integers(0, 3),
            "deprecated": st.booleans(),
        },
    )


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    typed = st.builds(lambda t, a: {"type": t, **a}, st.sampled_from(TYPES), _annotations())
    listed = st.builds(
        lambda ts, a: {"type": ts, **a},
        st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
        _annotations(),
    )
    enum = st.builds(lambda v: {"enum": v}, st.lists(SCALARS, min_size=1, max_size=4, unique=True))
    const = st.builds(lambda v: {"const": v}, SCALARS)
    return typed | listed | enum | const | st.just({}) | st.just({"description": "anything"})


def _compose(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    props = st.dictionaries(NAMES, children, max_size=4)
    obj = st.builds(
        lambda p, extra, req, a: {
            "type": "object",
            "properties": p,
            **({"additionalProperties": extra} if extra is not None else {}),
            "required": [n for n in req if n in p]
            + (["ghost"] if len(req) > 2 and "ghost" not in p else []),
            **a,
        },
        props,
        st.none() | st.booleans() | children,
        st.lists(NAMES, max_size=3, unique=True),
        _annotations(),
    )
    array = st.builds(lambda i, a: {"type": "array", "items": i, **a}, children, _annotations())
    combined = st.builds(
        lambda key, subs, a: {key: subs, **a},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(children, min_size=1, max_size=3),
        _annotations(),
    )
    return obj | array | combined


SCHEMAS = st.recursive(_leaf(), _compose, max_leaves=12)
TOP = st.builds(
    lambda props, req, draft: {
        **({"$schema": "https://json-schema.org/draft/2020-12/schema"} if draft else {}),
        "type": "object",
        "properties": props,
        "required": req,
        "additionalProperties": False,
    },
    st.dictionaries(NAMES, SCHEMAS, max_size=5),
    st.lists(NAMES, max_size=2, unique=True),
    st.booleans(),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TOP)
def test_gemini_always_gets_a_valid_declaration_with_every_property(schema: dict[str, Any]) -> None:
    converted = declaration_schema(schema)
    if converted is None:  # nothing to describe: no input
        assert not schema["properties"]
        return
    key, sent = converted
    if key == "parameters":
        assert gemini_rules.schema_violations(sent, "parameters", gemini_rules.CONSERVATIVE) == []
    else:
        declaration = {"name": "t", "parametersJsonSchema": sent}
        assert gemini_rules.declaration_violations(declaration) == []
        assert "$schema" not in sent
    assert sent["type"] == "object"
    assert set(schema["properties"]) <= set(sent["properties"])
    assert _names(schema) <= gemini_rules.property_names(sent)


def _names(node: Any) -> set[str]:
    """Every property name the schema describes (under maps, items, combinators)."""
    names: set[str] = set()
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
            for sub in properties.values():
                names |= _names(sub)
        if isinstance(node.get("items"), dict):
            names |= _names(node["items"])
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or []:
                names |= _names(sub)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            names |= _names(extra)
    return names


@settings(max_examples=200, deadline=None)
@given(TOP | SCHEMAS)
def test_openai_and_anthropic_always_get_an_accepted_schema(schema: dict[str, Any]) -> None:
    for local in (False, True):
        function = {"name": "t", "description": "d", "parameters": parameters(schema, local=local)}
        assert tool_rules.chat_violations({"type": "function", "function": function}) == []
    tool = {"name": "t", "input_schema": object_schema(schema, flatten_top=True)}
    assert tool_rules.anthropic_violations(tool) == []


DEF_NAMES = st.sampled_from(["A", "B", "C"])
REF = st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, DEF_NAMES) | st.just({"$ref": "#"})


def _with_refs(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return _compose(children | REF)


LOOPED = st.builds(
    lambda top_key, branches, defs, props: {
        "type": "object",
        "properties": props,
        top_key: branches,
        "$defs": defs,
    },
    st.sampled_from(["anyOf", "oneOf", "allOf"]),
    st.lists(REF | st.recursive(REF, _with_refs, max_leaves=6), min_size=1, max_size=3),
    st.dictionaries(DEF_NAMES, st.recursive(REF, _with_refs, max_leaves=6), min_size=1),
    st.dictionaries(NAMES, SCHEMAS | REF, max_size=3),
)
"""Schemas whose references may loop (``A`` through ``B`` back to ``A``, ``#``), under
the top-level combinators Anthropic's builder flattens."""


def _deep(key: str, levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):  # no recursion: the point is a depth past Python's limit
        shapes: dict[str, dict[str, Any]] = {
            "items": {"type": "array", "items": node},
            "anyOf": {"anyOf": [node, {"type": "null"}]},
            "allOf": {"allOf": [node]},
            "properties": {"type": "object", "properties": {"p": node}},
            "default": {"type": "object", "default": [node]},
        }
        node = shapes[key]
    return node


DEEP = st.builds(
    lambda key, levels, top: {
        "type": "object",
        **(
            {"anyOf": [_deep(key, levels)]} if top else {"properties": {"deep": _deep(key, levels)}}
        ),
    },
    st.sampled_from(["items", "anyOf", "allOf", "properties", "default"]),
    st.integers(60, 3000),
    st.booleans(),
)
"""Schemas nested deeper than any walk may recurse (or ``json.dumps`` may encode)."""


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(LOOPED | DEEP)
def test_looping_and_deep_schemas_are_loosened_to_accepted_ones(schema: dict[str, Any]) -> None:
    for local in (False, True):
        sent = parameters(schema, local=local)
        json.dumps(sent)
        function = {"name": "t", "description": "d", "parameters": sent}
        assert tool_rules.chat_violations({"type": "function", "function": function}) == []
    tool = {"name": "t", "input_schema": object_schema(schema, flatten_top=True)}
    json.dumps(tool)
    assert tool_rules.anthropic_violations(tool) == []
    converted = declaration_schema(schema)
    if converted is not None:
        declaration = {"name": "t", converted[0]: converted[1]}
        json.dumps(declaration)
        assert gemini_rules.declaration_violations(declaration) == []

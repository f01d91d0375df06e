"""Checks every ACP notification a test sees: wire form, official schema, ordering.

``check(notes)`` validates each line against the official ACP v1 schema, definition
``#/$defs/SessionNotification`` for the ``params`` (never the root: it admits any params
through ``ExtNotification``), and ``replay(notes)`` applies the tool-call updates to the
first ``tool_call`` with ACP's replace semantics, asserting the ordering rules as it goes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.helpers import REPO, SHARED
from toolwire.updates.render import Envelope
from toolwire.updates.wire import STATUS_RANK, TERMINAL, Notification, apply_update

# The schema shipped in the npm package `@agentclientprotocol/sdk` (`make node-deps`
# installs it for tests/node), else the copy kept beside the checkout in ../shared.
SCHEMAS = (
    REPO / "tests/node/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json",
    SHARED / "acp-schema/v1/schema.json",
)
_URI = "urn:toolwire-tests:acp-schema-v1"


@cache
def _load() -> dict[str, Any] | None:
    path = next((p for p in SCHEMAS if p.is_file()), None)
    if path is None:
        return None
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for definition in loaded["$defs"].values():
        _dispatch(definition)
    return loaded


def _dispatch(node: dict[str, Any]) -> None:
    """A ``oneOf`` tagged by a ``discriminator`` property as one ``if``/``then`` per tag.

    Each branch is an object that requires the tag with its own ``const`` (asserted), so
    exactly the branch named by the tag can match: the verdict is the ``oneOf``'s for any
    instance. jsonschema validates only that branch instead of every branch in full
    (which made a schema check cost ~9 ms per ``session/update``).
    """
    if "discriminator" not in node or "oneOf" not in node:
        return
    tag = node["discriminator"]["propertyName"]
    branches = node.pop("oneOf")
    consts = [b["properties"][tag]["const"] for b in branches]
    assert len(set(consts)) == len(consts), f"{tag}: tags must be distinct"
    assert all(b["type"] == "object" and tag in b["required"] for b in branches)
    tagged = {"type": "object", "required": [tag], "properties": {tag: {"enum": consts}}}
    node["allOf"] = [
        *node.get("allOf", []),
        tagged,
        *(
            {"if": {"properties": {tag: {"const": c}}}, "then": b}
            for c, b in zip(consts, branches, strict=True)
        ),
    ]


def schema() -> dict[str, Any]:
    """The ACP v1 JSON Schema; the test skips when neither copy is installed."""
    found = _load()
    if found is None:
        pytest.skip("no ACP v1 schema: run `make node-deps` (npm) to install it")
    return found


#: The unstable v1 schema (``providers/*``), from the same two places.
UNSTABLE = tuple(p.with_name("schema.unstable.json") for p in SCHEMAS)


@cache
def unstable_validator(definition: str) -> Draft202012Validator:
    """A validator for ``definition`` of the unstable v1 schema (skips without one)."""
    path = next((p for p in UNSTABLE if p.is_file()), None)
    if path is None:
        pytest.skip("no unstable ACP v1 schema: run `make node-deps` (npm) to install it")
    loaded = json.loads(path.read_text(encoding="utf-8"))
    uri = f"{_URI}-unstable"
    registry: Registry[Any] = Registry().with_resource(uri, Resource.from_contents(loaded))
    return Draft202012Validator({"$ref": f"{uri}#/$defs/{definition}"}, registry=registry)


@cache
def validator() -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resource(_URI, Resource.from_contents(schema()))
    return Draft202012Validator({"$ref": f"{_URI}#/$defs/SessionNotification"}, registry=registry)


def check(notes: Iterable[Notification]) -> list[Notification]:
    """Each notification: one ASCII JSON line equal to its dict, valid per the schema."""
    out = list(notes)
    for note in out:
        assert note.line.endswith(b"\n")
        assert note.line.count(b"\n") == 1, "a notification must be exactly one line"
        message = json.loads(note.line)
        assert message == note.message
        assert message["jsonrpc"] == "2.0"
        assert message["method"] == "session/update"
        assert "id" not in message
        errors = sorted(validator().iter_errors(message["params"]), key=str)
        assert not errors, f"schema: {errors[0].message} in {note.line[:300]!r}"
        assert note.kind == message["params"]["update"]["sessionUpdate"]
    return out


@contextmanager
def validating() -> Iterator[None]:
    """Check every notification the engine builds meanwhile, not only those a test reads."""
    original = Envelope.wrap

    def wrap(
        self: Envelope, update: dict[str, Any], body: str, kind: str, call: str | None
    ) -> Notification:
        note = original(self, update, body, kind, call)
        check([note])
        return note

    Envelope.wrap = wrap  # type: ignore[method-assign]
    try:
        yield
    finally:
        Envelope.wrap = original  # type: ignore[method-assign]


def replay(notes: Iterable[Notification]) -> dict[str, dict[str, Any]]:
    """Client view of every tool call after ``notes``; asserts the ordering rules."""
    calls: dict[str, dict[str, Any]] = {}
    ended: set[str] = set()
    for note in notes:
        update = note.update
        kind = update["sessionUpdate"]
        if kind not in ("tool_call", "tool_call_update"):
            continue
        call_id = update["toolCallId"]
        assert call_id not in ended, f"{call_id}: notification after the end"
        if kind == "tool_call":
            assert call_id not in calls, f"{call_id}: second tool_call"
            calls[call_id] = {k: v for k, v in update.items() if k != "sessionUpdate"}
        else:
            assert call_id in calls, f"{call_id}: update before tool_call"
            before = calls[call_id].get("status", "pending")
            calls[call_id] = apply_update(calls[call_id], update)
            after = calls[call_id].get("status", "pending")
            assert STATUS_RANK[after] >= STATUS_RANK[before], f"{call_id}: status went back"
        if calls[call_id].get("status") in TERMINAL:
            ended.add(call_id)
    return calls


def normalized(call: dict[str, Any]) -> dict[str, Any]:
    """A client view with ACP defaults made explicit (empty lists, pending)."""
    out = {"content": [], "locations": [], "status": "pending", **call}
    return out

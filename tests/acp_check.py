"""Checks every ACP notification a test sees: wire form, official schema, ordering.

``check(notes)`` validates each line against the vendored ACP v1 schema, definition
``#/$defs/SessionNotification`` for the ``params`` (never the root: it admits any params
through ``ExtNotification``), and ``replay(notes)`` applies the tool-call updates to the
first ``tool_call`` with ACP's replace semantics, asserting the ordering rules as it goes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from toolwire.updates.render import Envelope
from toolwire.updates.wire import STATUS_RANK, TERMINAL, Notification, apply_update

SCHEMA_DIR = Path(__file__).parent / "acp_schema" / "v1"
_URI = "urn:toolwire-tests:acp-schema-v1"


@cache
def validator() -> Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / "schema.json").read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry().with_resource(_URI, Resource.from_contents(schema))
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

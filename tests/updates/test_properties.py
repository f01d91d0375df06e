"""Properties of the engine for any sequence of changes, in every profile.

* applying the emitted updates with ACP's replace semantics to the first ``tool_call``
  reproduces the final desired state (checked with our own reducer and with the official
  SDK's ``SessionAccumulator``);
* no update is emitted that changes nothing;
* order is preserved: ``tool_call`` first, status never back, nothing after the end,
  text in the order written;
* every line is valid per the ACP schema and survives the SDK models unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from acp.contrib import SessionAccumulator
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.acp_check import check, normalized, replay, schema, validating
from toolwire.config.choices import PROFILES, Profile
from toolwire.testing.sdk import round_trip, to_sdk
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.wire import (
    STATUS_RANK,
    Notification,
    ToolCallState,
    apply_update,
    location,
    state_to_wire,
    text_content,
)


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


CALLS = ("call_a", "call_b", "call_c")
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, -0.0, 1.0])
    | st.text("ab=", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=3)
    ),
    max_leaves=6,
)
CONTENT = st.lists(st.sampled_from(["a", "b", "=", "=="]).map(text_content), max_size=2)
LOCATIONS = st.lists(
    st.builds(location, st.sampled_from(["/p/a", "/p/b"]), st.none() | st.integers(0, 2)),
    max_size=2,
)


@dataclass(frozen=True)
class Change:
    call: int
    fields: dict[str, Any]


@dataclass(frozen=True)
class Advance:
    seconds: float


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Copy:
    call: int  # re-feed an equal, rebuilt copy of the call's current state


STEP = st.one_of(
    st.builds(
        Change,
        st.integers(0, len(CALLS) - 1),
        st.fixed_dictionaries(
            {},
            optional={
                "title": st.sampled_from(["t1", "t2"]),
                "kind": st.sampled_from(["read", "edit", "execute"]),
                "status": st.sampled_from(["pending", "in_progress", "completed", "failed"]),
                "content": CONTENT,
                "locations": LOCATIONS,
                "raw_input": JSON.filter(lambda v: v is not None),
                "raw_output": JSON.filter(lambda v: v is not None),
            },
        ),
    ),
    st.builds(Advance, st.sampled_from([0.0, 0.01, 0.03, 0.06])),
    st.builds(Text, st.sampled_from(["=", "==", "x"])),
    st.builds(Copy, st.integers(0, len(CALLS) - 1)),
)


def _run(
    profile: Profile, steps: list[Any]
) -> tuple[list[Notification], dict[str, ToolCallState], list[str]]:
    engine = UpdateEngine("sess_p", profile=profile, interval=0.05)
    now = 0.0
    notes: list[Notification] = []
    desired: dict[str, ToolCallState] = {}
    texts: list[str] = []
    for step in steps:
        if isinstance(step, Advance):
            now += step.seconds
            notes += engine.poll(now)
        elif isinstance(step, Text):
            texts.append(step.text)
            notes += engine.text(step.text, now=now)
        elif isinstance(step, Copy):
            old = desired.get(CALLS[step.call])
            if old is not None and old.status not in ("completed", "failed"):
                notes += engine.update(_rebuilt(old), now=now)
        else:
            notes += _change(engine, desired, step, now)
    notes += engine.flush(now)
    return notes, desired, texts


def _change(
    engine: UpdateEngine, desired: dict[str, ToolCallState], step: Change, now: float
) -> list[Notification]:
    call_id = CALLS[step.call]
    old = desired.get(call_id)
    fields = dict(step.fields)
    if old is None:
        desired[call_id] = ToolCallState(call_id, "start").replace(**fields)
        return engine.start(desired[call_id], now)
    if old.status in ("completed", "failed"):
        return []
    if STATUS_RANK[fields.get("status", old.status)] < STATUS_RANK[old.status]:
        fields.pop("status")
    for raw in ("raw_input", "raw_output"):
        if raw in fields and fields[raw] is None:
            fields.pop(raw)
    desired[call_id] = old.replace(**fields)
    return engine.update(desired[call_id], now=now)


def _rebuilt(state: ToolCallState) -> ToolCallState:
    wire = json.loads(json.dumps(state_to_wire(state)))
    return ToolCallState(
        state.tool_call_id,
        wire["title"],
        wire["kind"],
        wire["status"],
        wire["content"],
        wire["locations"],
        wire.get("rawInput"),
        wire.get("rawOutput"),
    )


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PROFILES), st.lists(STEP, max_size=40))
def test_replaying_the_updates_gives_the_final_state(profile: Profile, steps: list[Any]) -> None:
    notes, desired, texts = _run(profile, steps)
    check(notes)
    views = replay(notes)
    assert set(views) == set(desired)
    for call_id, state in desired.items():
        assert _json(normalized(views[call_id])) == _json(normalized(state_to_wire(state)))
    chunks = [n.update["content"]["text"] for n in notes if n.kind == "agent_message_chunk"]
    assert chunks == texts, "text is never lost, duplicated or reordered"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PROFILES), st.lists(STEP, max_size=40))
def test_no_update_changes_nothing(profile: Profile, steps: list[Any]) -> None:
    notes, _, _ = _run(profile, steps)
    views: dict[str, dict[str, Any]] = {}
    for note in notes:
        update = note.update
        if update["sessionUpdate"] == "tool_call":
            views[update["toolCallId"]] = normalized(dict(update))
        elif update["sessionUpdate"] == "tool_call_update":
            before = views[update["toolCallId"]]
            after = apply_update(before, update)
            assert _json(after) != _json(before), f"empty update {update}"
            views[update["toolCallId"]] = after
            if profile == "minimal":
                for key, value in update.items():
                    if key not in ("sessionUpdate", "toolCallId"):
                        assert _json(before.get(key)) != _json(value), f"unchanged {key} sent"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PROFILES), st.lists(STEP, max_size=30))
def test_the_official_sdk_sees_the_same_state(profile: Profile, steps: list[Any]) -> None:
    notes, desired, _ = _run(profile, steps)
    accumulator = SessionAccumulator()
    for note in notes:
        round_trip(note)
        accumulator.apply(to_sdk(note))
    if not notes:
        return
    seen = accumulator.snapshot().tool_calls
    assert set(seen) == set(desired)
    for call_id, state in desired.items():
        view = seen[call_id]
        content = [c.model_dump(by_alias=True, exclude_none=True) for c in view.content or ()]
        locations = [c.model_dump(by_alias=True, exclude_none=True) for c in view.locations or ()]
        got = (
            view.title,
            view.kind,
            view.status,
            content,
            locations,
            view.raw_input,
            view.raw_output,
        )
        want = state_to_wire(state)
        expected = (
            want["title"],
            want["kind"],
            want["status"],
            want["content"],
            want["locations"],
            want.get("rawInput"),
            want.get("rawOutput"),
        )
        assert _json(got) == _json(expected)


def test_equal_states_never_emit() -> None:
    for profile in ("minimal", "verbose", "full"):
        engine = UpdateEngine("sess_p", profile=profile, interval=0.0)
        state = ToolCallState(
            "c", "t", "read", "in_progress", [text_content("=")], [location("/a")], {"a": [1]}
        )
        engine.start(state, now=0.0)
        for i in range(5):
            assert engine.update(_rebuilt(state), now=float(i)) == []
            assert engine.update(state, now=float(i)) == []
        assert engine.flush() == []


@dataclass(frozen=True)
class Ask:
    call: int  # session/request_permission for this call, if it is open


@cache
def _permission_validator() -> Draft202012Validator:
    uri = "urn:toolwire-tests:acp-schema-v1-permission"
    registry: Registry[Any] = Registry().with_resource(uri, Resource.from_contents(schema()))
    return Draft202012Validator(
        {"$ref": f"{uri}#/$defs/RequestPermissionRequest"}, registry=registry
    )


OPTIONS = [{"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(PROFILES),
    st.lists(STEP | st.builds(Ask, st.integers(0, len(CALLS) - 1)), max_size=25),
)
def test_a_permission_request_names_the_call_and_never_changes_it(
    profile: Profile, steps: list[Any]
) -> None:
    """Every profile: title, kind, locations and rawInput as the client holds them (a
    client's policy matches on them); content only as held (never over a diff)."""
    validator = _permission_validator()
    engine = UpdateEngine("sess_p", profile=profile, interval=0.05)
    now = 0.0
    notes: list[Notification] = []
    desired: dict[str, ToolCallState] = {}
    for step in steps:
        if isinstance(step, Advance):
            now += step.seconds
            notes += engine.poll(now)
        elif isinstance(step, Change):
            notes += _change(engine, desired, step, now)
        elif isinstance(step, Ask):
            state = desired.get(CALLS[step.call])
            if state is None or state.status in ("completed", "failed"):
                continue
            flushed, payload = engine.permission(state.tool_call_id, now=now)
            notes += flushed
            request = {"sessionId": "sess_p", "toolCall": payload, "options": OPTIONS}
            errors = sorted(validator.iter_errors(json.loads(json.dumps(request))), key=str)
            assert not errors, f"schema: {errors[0].message} in {request}"
            held = normalized(replay(notes)[state.tool_call_id])
            for key in ("title", "kind", "locations"):
                assert _json(payload[key]) == _json(held[key])
            assert _json(payload.get("rawInput")) == _json(held.get("rawInput"))
            if profile == "full":
                assert _json(payload["content"]) == _json(held["content"])
            else:
                assert "content" not in payload
            assert _json(apply_update(held, payload)) == _json(held), "it changes nothing"

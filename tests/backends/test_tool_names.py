"""Tool names each provider accepts, and calls mapped back to the names offered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.backends import gemini_rules, schema_samples, tool_rules
from tests.backends.support import FAST, KEY, collect, find
from tests.fakes.http import FakeServer, Reply, sse
from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends._names import ANTHROPIC, GEMINI, OPENAI, NameRule, ToolNames
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.base import ModelRequest
from toolwire.backends.gemini import GeminiBackend
from toolwire.backends.replay import ReplayBackend
from toolwire.events import ToolCallEnd, ToolCallStart
from toolwire.history import Message, ToolCallPart, ToolResultPart, ToolSpec, tool_results, user

RULES = {"anthropic": ANTHROPIC, "openai": OPENAI, "gemini": GEMINI}
CHECKS = {
    "anthropic": tool_rules.NAME.fullmatch,
    "openai": tool_rules.NAME.fullmatch,
    "gemini": gemini_rules.NAME.fullmatch,
}


@pytest.mark.parametrize("provider", RULES)
def test_valid_names_stay_as_they_are(provider: str) -> None:
    names = [t.name for t in schema_samples.ALL]
    mapped = ToolNames.build(names, RULES[provider])
    assert [mapped.wire(n) for n in names] == names
    assert mapped.to_wire == {}


@pytest.mark.parametrize("provider", RULES)
def test_rejected_names_are_rewritten_to_accepted_distinct_ones(provider: str) -> None:
    mapped = ToolNames.build(schema_samples.BAD_NAMES, RULES[provider])
    wires = [mapped.wire(n) for n in schema_samples.BAD_NAMES]
    assert all(CHECKS[provider](w) for w in wires), wires
    assert len(set(wires)) == len(wires)
    assert [mapped.original(w) for w in wires] == schema_samples.BAD_NAMES


def test_a_rewrite_never_takes_a_valid_name_nor_renames_another_tool() -> None:
    alone = ToolNames.build(["notes.search"], OPENAI)
    both = ToolNames.build(["notes.search", "notes_search"], OPENAI)
    assert both.wire("notes_search") == "notes_search"
    assert both.wire("notes.search") == alone.wire("notes.search") != "notes_search"
    assert both.wire("notes.search").startswith("notes_search_")


@given(st.lists(st.text(max_size=90), max_size=8), st.sampled_from(sorted(RULES)))
def test_any_names_map_to_accepted_distinct_names_and_back(names: list[str], key: str) -> None:
    rule: NameRule = RULES[key]
    mapped = ToolNames.build(names, rule)
    wires = {n: mapped.wire(n) for n in names}
    assert all(rule.accepts(w) for w in wires.values())
    assert len(set(wires.values())) == len(wires)
    assert all(mapped.original(w) == n for n, w in wires.items())


# -- in the bodies: definitions and history agree ------------------------------------------

BAD = "mcp__my notes__search.all"  # a space: rejected by every provider


def _loop_request() -> ModelRequest:
    call = ToolCallPart("call_1", BAD, {"q": "x"})
    return ModelRequest(
        system="s",
        messages=(
            user("find"),
            Message("assistant", (call,), backend="b"),
            tool_results([ToolResultPart("call_1", BAD, "found")]),
        ),
        tools=(ToolSpec(BAD, "Search notes.", {"type": "object", "properties": {}}),),
    )


def _names_in(body: dict[str, Any], provider: str) -> tuple[str, set[str]]:
    if provider == "anthropic":
        offered = body["tools"][0]["name"]
        used = {b["name"] for m in body["messages"] for b in m["content"] if "name" in b}
    elif provider == "openai-chat":
        offered = body["tools"][0]["function"]["name"]
        used = {c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls", [])}
    elif provider == "openai-responses":
        offered = body["tools"][0]["name"]
        used = {i["name"] for i in body["input"] if i["type"] == "function_call"}
    else:
        offered = body["tools"][0]["functionDeclarations"][0]["name"]
        parts = [p for c in body["contents"] for p in c["parts"]]
        used = {p[k]["name"] for p in parts for k in ("functionCall", "functionResponse") if k in p}
    return offered, used


@pytest.mark.parametrize(
    ("provider", "build"),
    [
        ("anthropic", anthropic.build_body),
        ("openai-chat", openai_chat.build_body),
        ("openai-responses", openai_responses.build_body),
        ("gemini", gemini.build_body),
    ],
)
def test_history_calls_use_the_same_wire_name_as_the_definition(provider: str, build: Any) -> None:
    body = build(_loop_request(), model="m", backend="b")
    offered, used = _names_in(body, provider)
    assert offered != BAD
    assert used == {offered}


# -- in the stream: the model's call comes back under the offered name ---------------------


def _anthropic_call(name: str) -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": '{"q": "x"}'}
    return sse(
        [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def _gemini_call(name: str) -> bytes:
    part = {"functionCall": {"name": name, "args": {"q": "x"}}}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
    return sse([(None, {"candidates": [candidate], "responseId": "r1"})])


def test_anthropic_call_under_a_rewritten_name_reaches_the_agent_as_offered() -> None:
    request = _loop_request()
    wire = ToolNames.build([BAD], ANTHROPIC).wire(BAD)
    with FakeServer() as server:
        server.script(Reply(chunks=[_anthropic_call(wire)]))
        backend = AnthropicBackend(
            name="b", model="m", api_key=KEY, base_url=server.url, settings=FAST
        )
        events = collect(backend.stream(request))
        assert server.requests[0].json()["tools"][0]["name"] == wire
    assert [s.name for s in find(events, ToolCallStart)] == [BAD]
    assert find(events, ToolCallEnd)[0].arguments == {"q": "x"}


def test_gemini_call_under_a_rewritten_name_reaches_the_agent_as_offered() -> None:
    offered = "9lives"  # Gemini wants a letter or _ first; the others take it as it is
    request = ModelRequest(system="", messages=(user("go"),), tools=(ToolSpec(offered, "d"),))
    wire = ToolNames.build([offered], GEMINI).wire(offered)
    assert wire != offered
    with FakeServer() as server:
        server.script(Reply(chunks=[_gemini_call(wire)]))
        backend = GeminiBackend(
            name="g", model="m", api_key=KEY, base_url=server.url, settings=FAST
        )
        events = collect(backend.stream(request))
    assert [s.name for s in find(events, ToolCallStart)] == [offered]


def test_a_replayed_recording_maps_wire_names_back_too(tmp_path: Path) -> None:
    request = _loop_request()
    wire = ToolNames.build([BAD], GEMINI).wire(BAD)
    row = {"provider": "gemini", "body": _gemini_call(wire).decode()}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    events = collect(ReplayBackend(name="r", cassette=path).stream(request))
    assert [s.name for s in find(events, ToolCallStart)] == [BAD]

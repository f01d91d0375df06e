"""The pass-through body for Anthropic backends (``proxy/passthrough.py``): what is kept,
what is fixed, and the thinking rules."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from toolwire.config.choices import PassthroughLevel
from toolwire.history.pairing import NOT_RUN
from toolwire.proxy.passthrough import Prepared, default_level, prepare

THOUGHT = {"type": "thinking", "thinking": "plan", "signature": "sig-a"}
CACHE = {"type": "ephemeral"}
HEADERS = {
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "interleaved-thinking-2025-05-14",
    "x-api-key": "sk-client",
    "user-agent": "claude-cli",
}


def _use(call_id: str, path: str = "a.py") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": path}}


def _result(call_id: str, text: str = "1\tx\n", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}


def _body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-opus-5-5",
        "max_tokens": 128000,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=1;"},
            {"type": "text", "text": "You are a coding agent.", "cache_control": CACHE},
        ],
        "tools": [
            {
                "name": "Read",
                "description": "Read a file.",
                "input_schema": {"type": "object"},
                "cache_control": CACHE,
            },
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        ],
        "messages": messages,
        "metadata": {"user_id": '{"device_id": "d", "session_id": "s"}'},
        "thinking": {"type": "adaptive"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015"}]},
        "output_config": {"effort": "high"},
        "stream": True,
    }
    body.update(extra)
    return body


def _loop(first: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Prompt, an assistant turn opening with ``first`` then a Read call, its result."""
    return [
        {"role": "user", "content": "Read a.py"},
        {"role": "assistant", "content": [*first, _use("toolu_1")]},
        {"role": "user", "content": [_result("toolu_1")]},
    ]


def _prepare(
    body: dict[str, Any],
    level: PassthroughLevel = "full",
    owners: dict[str, str] | None = None,
    **kw: Any,
) -> Prepared:
    """``owners``: thinking signature -> the backend that produced that turn."""
    produced = owners or {}

    def owner(content: Any) -> str | None:
        for block in content:
            found = produced.get(str(block.get("signature")))
            if found:
                return found
        return None

    return prepare(
        body,
        level=level,
        model="claude-up",
        target="claude",
        owner=owner,
        headers=HEADERS,
        **kw,
    )


def test_full_level_forwards_the_body_as_it_came() -> None:
    body = _body(_loop([THOUGHT]))
    before = copy.deepcopy(body)
    out = _prepare(body, owners={"sig-a": "claude"})
    assert body == before  # the client's body is not modified in place
    expected = {**before, "model": "claude-up"}
    assert json.dumps(out.body) == json.dumps(expected)  # same bytes, same order
    assert out.headers == {
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "interleaved-thinking-2025-05-14",
    }
    assert out.stripped_thinking == 0
    assert not out.dropped_thinking_param


def test_core_level_sends_only_the_public_api() -> None:
    body = _body(
        [
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHE}]},
            {"role": "system", "content": "The date changed."},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "next"},
        ]
    )
    out = _prepare(body, level="core").body
    assert set(out) == {"model", "max_tokens", "system", "tools", "messages", "thinking", "stream"}
    assert out["system"] == "You are a coding agent."  # billing block and cache_control gone
    assert out["tools"] == [
        {"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}
    ]
    assert out["max_tokens"] == 32000
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert "cache_control" not in json.dumps(out)
    # The system message became user text, merged with the user message before it.
    assert out["messages"][0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "text", "text": "The date changed."},
        ],
    }
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assert _prepare(body, level="core").headers == {"anthropic-version": "2023-06-01"}


def test_core_level_drops_adaptive_thinking_without_room_for_a_budget() -> None:
    out = _prepare(_body([{"role": "user", "content": "hi"}], max_tokens=1000), level="core")
    assert "thinking" not in out.body


def test_tool_results_go_first_and_in_call_order() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": [_use("toolu_1"), _use("toolu_2", "b.py")]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                _result("toolu_2", "B"),
                _result("toolu_1", "A", is_error=True),
            ],
        },
    ]
    out = _prepare(_body(messages, thinking={"type": "disabled"})).body["messages"]
    assert out[2]["content"] == [
        _result("toolu_1", "A", is_error=True),
        _result("toolu_2", "B"),
        {"type": "text", "text": "<system-reminder>x</system-reminder>"},
    ]


def test_unanswered_calls_and_orphan_results_are_repaired() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_use("toolu_1"), _use("toolu_2")]},
        {"role": "user", "content": [_result("toolu_1"), _result("toolu_zzz", "stray")]},
        {"role": "assistant", "content": [_use("toolu_3")]},
        {"role": "assistant", "content": [{"type": "text", "text": "more"}]},
    ]
    out = _prepare(_body(messages, thinking={"type": "disabled"})).body["messages"]
    second = out[2]["content"]
    assert second[0] == _result("toolu_1")
    assert second[1] == {
        "type": "tool_result",
        "tool_use_id": "toolu_2",
        "content": NOT_RUN,
        "is_error": True,
    }
    assert second[2]["type"] == "text"
    assert "stray" in second[2]["text"]
    # Consecutive assistant messages merge into one turn (as the API reads them).
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"]


def test_ids_are_normalized_on_both_sides_and_valid_ones_kept() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_use("call:1/x"), _use("toolu_ok")]},
        {"role": "user", "content": [_result("call:1/x"), _result("toolu_ok")]},
    ]
    out = _prepare(_body(messages, thinking={"type": "disabled"})).body["messages"]
    uses = [b["id"] for b in out[1]["content"]]
    results = [b["tool_use_id"] for b in out[2]["content"]]
    assert uses == results == ["call_1_x", "toolu_ok"]


def test_empty_text_blocks_are_removed() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "text", "text": ""}, _use("toolu_1")]},
        {"role": "user", "content": [_result("toolu_1")]},
    ]
    out = _prepare(_body(messages, thinking={"type": "disabled"})).body["messages"]
    assert out[0]["content"] == [{"type": "text", "text": "a"}]
    assert out[1]["content"] == [_use("toolu_1")]


@pytest.mark.parametrize("level", ["full", "core"])
def test_foreign_thinking_is_stripped_and_the_thinking_param_dropped(
    level: PassthroughLevel,
) -> None:
    body = _body(_loop([THOUGHT, {"type": "redacted_thinking", "data": "opaque"}]))
    out = _prepare(body, level=level, owners={"sig-a": "glm"})
    assert "sig-a" not in json.dumps(out.body)
    assert "opaque" not in json.dumps(out.body)
    assert out.stripped_thinking == 2
    # The request continues that turn's tool loop, which no longer opens with thinking.
    assert out.dropped_thinking_param
    assert "thinking" not in out.body
    assert "context_management" not in out.body


def test_own_thinking_is_kept_with_the_thinking_param() -> None:
    out = _prepare(_body(_loop([THOUGHT])), owners={"sig-a": "claude"})
    assert out.body["messages"][1]["content"][0] == THOUGHT
    assert out.body["thinking"] == {"type": "adaptive"}


def test_unknown_thinking_is_stripped() -> None:
    out = _prepare(_body(_loop([THOUGHT])))  # no record of who produced it
    assert "sig-a" not in json.dumps(out.body)
    assert out.dropped_thinking_param


def test_thinking_param_stays_when_no_tool_loop_is_continued() -> None:
    messages = [*_loop([THOUGHT]), {"role": "assistant", "content": "done"}]
    messages.append({"role": "user", "content": "next question"})
    out = _prepare(_body(messages))
    assert out.stripped_thinking == 1
    assert not out.dropped_thinking_param
    assert out.body["thinking"] == {"type": "adaptive"}


def test_thinking_param_stays_for_an_own_turn_that_did_not_think() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "", "signature": "sig-old"}],
        },
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": [_use("toolu_1")]},
        {"role": "user", "content": [_result("toolu_1")]},
    ]

    def owner(content: Any) -> str | None:
        return "claude" if any(b.get("id") == "toolu_1" for b in content) else None

    out = prepare(
        _body(messages),
        level="full",
        model="m",
        target="claude",
        owner=owner,
        headers={},
    )
    assert not out.dropped_thinking_param


def test_prefix_is_placed_before_the_messages_from_start() -> None:
    prefix = [{"role": "user", "content": [{"type": "text", "text": "[HANDOFF] files..."}]}]
    messages = [
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "new question"},
        {"role": "assistant", "content": "new answer"},
        {"role": "user", "content": "and now?"},
    ]
    out = _prepare(_body(messages, thinking={"type": "disabled"}), prefix=prefix, start=3).body
    assert out["messages"] == [prefix[0], *messages[3:]]


def test_default_level_by_host() -> None:
    assert default_level(None) == "full"
    assert default_level("https://api.anthropic.com") == "full"
    assert default_level("https://open.bigmodel.cn/api/anthropic") == "core"
    assert default_level("http://127.0.0.1:9000") == "core"


def test_a_turn_in_the_prefix_never_counts_as_kept_whole() -> None:
    # The handoff prefix ends inside a tool loop of claude's own (its thinking already
    # dropped when the prefix was rendered): the thinking parameter must go.
    prefix = [
        {"role": "user", "content": [{"type": "text", "text": "[HANDOFF] ..."}]},
        {"role": "assistant", "content": [_use("toolu_1")]},
        {"role": "user", "content": [_result("toolu_1")]},
    ]

    def owner(content: Any) -> str | None:
        return "claude"  # every turn is recorded as claude's

    body = _body([{"role": "user", "content": "old"}])
    out = prepare(
        body,
        level="full",
        model="m",
        target="claude",
        owner=owner,
        headers={},
        prefix=prefix,
        start=1,
    )
    assert out.body["messages"] == prefix
    assert out.dropped_thinking_param

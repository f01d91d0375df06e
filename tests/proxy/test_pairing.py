"""Tool-result pairing has one set of rules (``toolwire.history.pairing``): the raw
pass-through and the backends' request builders answer calls and keep orphans alike."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.backends import anthropic
from toolwire.history.pairing import NOT_RUN, orphan_text, pair
from toolwire.proxy.passthrough import prepare
from toolwire.proxy.translate import import_history, to_model_request


def test_pair_answers_calls_in_order_and_leaves_the_rest() -> None:
    assert pair(["a", "b"], ["b", "zz", "a"]) == ([2, 0], [1])
    assert pair(["a", "b"], []) == ([None, None], [])
    # A repeated id: results pair with its calls in order; one too many is left over.
    assert pair(["x", "x"], ["x", "x", "x"]) == ([0, 1], [2])
    assert pair(["x", "x"], ["x"]) == ([0, None], [])


@pytest.mark.parametrize(
    ("name", "is_error", "text"),
    [
        ("Read", False, "Result of an earlier Read call:\nout"),
        ("Bash", True, "Result of an earlier Bash call (error):\nout"),
        (None, False, "Result of an earlier tool call:\nout"),
        ("unknown", False, "Result of an earlier tool call:\nout"),  # the importers' name
    ],
)
def test_orphan_text(name: str | None, is_error: bool, text: str) -> None:
    assert orphan_text(name, "out", is_error=is_error) == text


def _use(call_id: str, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def _result(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}


BODY: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 1000,
    "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_use("toolu_1", "Read"), _use("toolu_2", "Bash")]},
        {
            "role": "user",
            "content": [
                _result("toolu_1", "A"),
                _result("toolu_1", "A again"),  # a duplicate: its call is answered already
                _result("toolu_zz", "stray", is_error=True),  # answers no call at all
            ],
        },
        {"role": "assistant", "content": [_use("call.x", "Grep"), _use("call.x", "Grep")]},
        {"role": "user", "content": [_result("call.x", "1"), _result("call.x", "2")]},
    ],
}


def _shape(messages: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    """Every tool result (id, content, error) and every orphan text, in order."""
    results, orphans = [], []
    for message in messages:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_result":
                results.append((block["tool_use_id"], block["content"], block.get("is_error")))
            elif block["type"] == "text" and block["text"].startswith("Result of an earlier"):
                orphans.append(block["text"])
    return results, orphans


def test_the_pass_through_and_the_backends_pair_alike_with_the_same_words() -> None:
    raw = prepare(BODY, level="core", model="m", target="t", owner=lambda c: None, headers={})
    request = to_model_request(BODY, import_history(BODY))
    built = anthropic.build_body(request, model="m", backend="t")
    results, orphans = _shape(raw.body["messages"])
    assert (results, orphans) == _shape(built["messages"])
    assert [(i, c) for i, c, _ in results] == [
        ("toolu_1", "A"),
        ("toolu_2", NOT_RUN),
        ("call_x", "1"),
        ("call_x_2", "2"),
    ]
    assert orphans == [
        "Result of an earlier Read call:\nA again",
        "Result of an earlier tool call (error):\nstray",
    ]

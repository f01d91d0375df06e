"""The OpenAI importers on their own: what a request becomes in the planner's form."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire.backends.base import ToolChoice
from toolwire.proxy.dialects.base import DialectError
from toolwire.proxy.dialects.openai_chat import import_chat
from toolwire.proxy.dialects.openai_responses import planner_messages, planner_tools
from toolwire.proxy.errors import BadRequestError
from toolwire.proxy.translate import import_history, to_model_request

FUNCTION = {"type": "function", "name": "Read", "parameters": {"type": "object"}}
PATCH_TOOL = {"type": "custom", "name": "apply_patch", "format": {"type": "grammar",
              "syntax": "lark", "definition": "start: patch"}}  # fmt: skip


def _chat(**extra: Any) -> dict[str, Any]:
    tools = [{"type": "function", "function": {"name": n}} for n in ("Read", "Bash")]
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    return import_chat(body | extra, {})


def test_tool_choice_none_offers_no_tool_and_a_named_one_forces_it() -> None:
    assert [t["name"] for t in _chat()["tools"]] == ["Read", "Bash"]
    assert _chat(tool_choice="none")["tools"] == []
    named = _chat(tool_choice={"type": "function", "function": {"name": "Bash"}})
    # Every tool stays offered (the history may hold calls of any); the call is forced.
    assert [t["name"] for t in named["tools"]] == ["Read", "Bash"]
    assert named["tool_choice"] == {"type": "tool", "name": "Bash"}
    request = to_model_request(named, import_history(named))
    assert request.tool_choice == ToolChoice("Bash")
    assert to_model_request(_chat(tool_choice="required"), ()).tool_choice == ToolChoice()
    assert to_model_request(_chat(tool_choice="auto"), ()).tool_choice is None
    allowed = {"type": "allowed_tools", "mode": "required", "tools": [FUNCTION]}
    tools, custom = planner_tools([FUNCTION, PATCH_TOOL], allowed)
    assert [t["name"] for t in tools] == ["Read"]
    assert custom == frozenset({"apply_patch"})


def test_a_named_tool_that_is_not_offered_is_refused() -> None:
    body = _chat(tool_choice={"type": "function", "function": {"name": "Write"}})
    with pytest.raises(BadRequestError, match="'Write' is not among the tools offered"):
        to_model_request(body, import_history(body))


def test_n_above_one_is_refused_naming_the_field() -> None:
    with pytest.raises(DialectError, match="one choice per request") as refused:
        _chat(n=2)
    assert refused.value.param == "n"
    assert "tool_choice" not in _chat(n=1)


def test_a_freeform_tool_is_a_function_of_one_string_with_its_grammar() -> None:
    (tool,) = planner_tools([PATCH_TOOL], "auto")[0]
    schema = tool["input_schema"]
    assert schema["required"] == ["input"]
    assert schema["properties"]["input"]["type"] == "string"
    assert "start: patch" in schema["properties"]["input"]["description"]


def test_reasoning_effort_and_the_output_limit_reach_the_neutral_request() -> None:
    body = _chat(reasoning_effort="high", max_completion_tokens=500)
    request = to_model_request(body, import_history(body))
    assert (request.thinking, request.max_tokens) == ("high", 500)
    assert to_model_request(_chat(), ()).thinking == "off"


def test_response_items_become_one_history() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    items: list[Any] = [
        {"role": "developer", "content": "Be careful."},
        {"role": "user", "content": [{"type": "input_text", "text": "Look"}, image]},
        {"type": "function_call", "call_id": "c1", "name": "Read", "arguments": '{"p": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "text"},
        {"type": "reasoning", "id": "rs_x", "summary": [], "encrypted_content": "opaque"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]
    system, messages = planner_messages(items)
    assert system == ["Be careful."]
    body = {"model": "m", "messages": messages}
    history = import_history(body)
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert "AAAA" in json.dumps(messages)
    # A reasoning item the proxy did not write is opaque to every backend: left out.
    assert "opaque" not in json.dumps(messages)


def test_malformed_requests_name_the_field() -> None:
    with pytest.raises(DialectError) as caught:
        import_chat({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, {})
    assert caught.value.param == "messages[0].tool_call_id"
    call = {"id": "c", "function": {"name": "f", "arguments": "{not json"}}
    with pytest.raises(DialectError) as bad_args:
        import_chat({"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]}, {})
    assert bad_args.value.param == "messages[0].tool_calls[0].function.arguments"

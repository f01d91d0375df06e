"""Text tool formats: tools described in the system prompt, calls parsed back from text."""

from __future__ import annotations

import pytest

from toolwire.backends import anthropic, openai_chat
from toolwire.backends.base import ModelRequest
from toolwire.backends.textformat import TagAdapter, render_call, tag_decoder, tool_prompt
from toolwire.config.choices import ToolFormat
from toolwire.decode.textformats import TEXT_FORMATS, renderer
from toolwire.events import Event, MessageEnd, TextDelta, ToolCallEnd, ToolCallStart
from toolwire.history import (
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    tool_results,
    user,
)

FORMATS = TEXT_FORMATS  # every format of the registry
EDIT = ToolSpec(
    "Edit",
    "Replace text in a file.",
    {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
    },
)
ARGS = {
    "file_path": "src/app.py",
    "old_string": "if a < b && c:\n    return  ",
    "new_string": "x = ']]>' # tricky",
    "replace_all": True,
}


def _history() -> list[Message]:
    return [
        user("edit it"),
        Message(
            "assistant", (TextPart("Editing."), ToolCallPart("c1", "Edit", ARGS)), backend="local"
        ),
        tool_results([ToolResultPart("c1", "Edit", "file changed", is_error=True)]),
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_prompt_describes_tools_and_markup_instead_of_native_tools(fmt: ToolFormat) -> None:
    request = ModelRequest("You are terse.", tuple(_history()), (EDIT,), 50)
    body = openai_chat.build_body(request, model="m", backend="local", tool_format=fmt)
    assert "tools" not in body
    system = body["messages"][0]["content"]
    assert system.startswith("You are terse.\n\n# Tools")
    assert "### Edit" in system
    assert '"file_path"' in system
    assert renderer(fmt)("NAME", {"ARGUMENT": "value"}) in system  # the format's own markup
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # no tool role on the wire
    assert body["messages"][2]["content"].startswith("Editing.")
    assert 'status="error"' in body["messages"][3]["content"]
    assert "file changed" in body["messages"][3]["content"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_rendered_call_decodes_back_to_its_arguments(fmt: ToolFormat) -> None:
    text = render_call(fmt, ToolCallPart("c1", "Edit", ARGS))
    decoder = tag_decoder(fmt, (EDIT,))
    events = decoder.feed(text) + decoder.close()
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [s.name for s in starts] == ["Edit"]
    # Every format, XML's text too, is typed by the tool's schema: replace_all is True.
    assert ends[0].arguments == dict(ARGS)
    assert not [e for e in events if isinstance(e, TextDelta) and e.text.strip()]


def test_anthropic_text_format_sends_no_tools_and_no_tool_blocks() -> None:
    request = ModelRequest("", tuple(_history()), (EDIT,), 50)
    body = anthropic.build_body(request, model="m", backend="local", tool_format="hermes")
    assert "tools" not in body
    assert body["system"].startswith("# Tools")
    kinds = {b["type"] for m in body["messages"] for b in m["content"]}
    assert kinds == {"text"}


def test_tool_prompt_lists_every_tool() -> None:
    other = ToolSpec("Bash", "Run a command.", {})
    prompt = tool_prompt("qwen3-coder", (EDIT, other))
    assert "### Edit" in prompt
    assert "### Bash" in prompt
    assert '{"type": "object"}' in prompt


def test_adapter_parses_calls_out_of_text_and_ends_with_tool_use() -> None:
    adapter = TagAdapter("hermes", (EDIT,))
    out: list[Event] = []
    text = 'Sure. <tool_call>\n{"name": "Edit", "arguments": {"file_path": "a"}}\n</tool_call>'
    for i in range(0, len(text), 7):
        out += adapter.events([TextDelta(text[i : i + 7])])
    out += adapter.events([MessageEnd("end_turn")])
    assert "".join(e.text for e in out if isinstance(e, TextDelta)).strip() == "Sure."
    start = next(e for e in out if isinstance(e, ToolCallStart))
    end = next(e for e in out if isinstance(e, ToolCallEnd))
    assert start.id == end.id
    assert start.id.startswith("call_")
    assert start.id != "call_0"  # unique across responses, not the decoder's per-response id
    assert end.arguments == {"file_path": "a"}
    assert out[-1] == MessageEnd("tool_use")


def test_adapter_keeps_a_cut_response_cut() -> None:
    adapter = TagAdapter("qwen3-coder", (EDIT,))
    events = adapter.events([TextDelta("<tool_call>\n<function=Edit>\n<parameter=file_path>\na")])
    events += adapter.events([MessageEnd("max_tokens")])
    assert events[-1] == MessageEnd("max_tokens")
    assert any(isinstance(e, ToolCallEnd) and not e.ok for e in events)


TODO = ToolSpec(
    "TodoWrite",
    "Update the plan.",
    {"type": "object", "properties": {"todos": {"type": "array"}}},
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_arguments_round_trip(fmt: ToolFormat) -> None:
    todos = [{"content": "read", "status": "done"}, {"content": "edit", "status": "pending"}]
    text = render_call(fmt, ToolCallPart("c", "TodoWrite", {"todos": todos}))
    decoder = tag_decoder(fmt, (TODO,))
    events = decoder.feed(text) + decoder.close()
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.arguments == {"todos": todos}


@pytest.mark.parametrize(
    "text",
    [
        '<function=Edit>{"file_path": "a"}</function>',
        '```json\n{"name": "Edit", "arguments": {"file_path": "a"}}\n```',
    ],
)
def test_hermes_adapter_knows_the_offered_tools(text: str) -> None:
    # llama.cpp's other Hermes forms are calls for a tool the request offered.
    adapter = TagAdapter("hermes", (EDIT,))
    out = adapter.events([TextDelta(text), MessageEnd("end_turn")])
    assert [e.arguments for e in out if isinstance(e, ToolCallEnd)] == [{"file_path": "a"}]
    assert out[-1] == MessageEnd("tool_use")

"""Importing Anthropic and OpenAI transcripts, format detected from the shape."""

from __future__ import annotations

import json

import pytest

from tests.handoff.support import ANTHROPIC_MESSAGES, OPENAI_MESSAGES
from toolwire.handoff import (
    TranscriptError,
    build_handoff,
    detect_format,
    import_transcript,
    load_transcript,
)
from toolwire.history import Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from toolwire.history.jsonform import message_to_dict


def test_anthropic_body_and_message_list() -> None:
    body = {
        "model": "claude-x",
        "system": "be brief",
        "max_tokens": 100,
        "messages": ANTHROPIC_MESSAGES,
    }
    for data in (body, ANTHROPIC_MESSAGES):
        assert detect_format(data) == "anthropic"
        history = import_transcript(data, backend="claude").messages
        assert [m.role for m in history] == [
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert history[1] == Message(
            "assistant",
            (
                ThinkingPart("Let me read it.", "EqQBsig"),
                TextPart("Reading."),
                ToolCallPart("toolu_01", "Read", {"file_path": "/p/DESIGN.md"}),
            ),
            "claude",
        )
        assert history[2].parts == (ToolResultPart("toolu_01", "Read", "1\t# Design"),)
        assert history[3].parts == (TextPart("Now run the tests."),)
        assert history[4].parts[0] == ThinkingPart("", redacted="opaque")
        assert history[5].parts == (ToolResultPart("toolu_02", "Bash", "exit 1", is_error=True),)


def test_openai_chat_list() -> None:
    assert detect_format(OPENAI_MESSAGES) == "openai-chat"
    history = import_transcript(OPENAI_MESSAGES).messages
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "user"]
    assert history[1].parts == (
        ThinkingPart("I should read it."),
        ToolCallPart("call_a", "Read", {"file_path": "/p/DESIGN.md"}),
        ToolCallPart("call_b", "Bash", {"command": "ls"}),
    )
    assert history[2].parts == (
        ToolResultPart("call_a", "Read", "1\t# Design"),
        ToolResultPart("call_b", "Bash", "DESIGN.md"),
    )
    assert history[3].parts[1] == ToolCallPart("call_c", "Grep", "{bad json")
    body = {"model": "gpt", "messages": OPENAI_MESSAGES}
    assert import_transcript(body).messages == history


def test_both_formats_give_the_same_tool_context() -> None:
    a = build_handoff(list(import_transcript(ANTHROPIC_MESSAGES).messages), keep_last=0)
    o = build_handoff(list(import_transcript(OPENAI_MESSAGES).messages), keep_last=0)
    assert "1\t# Design" in a.block
    assert "1\t# Design" in o.block
    assert "<system-reminder>" not in a.block  # the summary leaves client reminders out
    assert "Task (the user's first request):\nRead the design doc." in a.block


def test_interrupted_call_in_imported_transcript() -> None:
    messages = [*ANTHROPIC_MESSAGES[:1], ANTHROPIC_MESSAGES[1]]
    handoff = build_handoff(list(import_transcript(messages).messages), keep_last=0)
    assert handoff.items[0].item.interrupted
    assert "(interrupted)" in handoff.block


def test_toolwire_history_json_and_json_lines() -> None:
    history = list(import_transcript(ANTHROPIC_MESSAGES, backend="c").messages)
    rows = [message_to_dict(m) for m in history]
    assert load_transcript(json.dumps(rows)).messages == tuple(history)
    lines = "\n".join(json.dumps(r) for r in rows)
    loaded = load_transcript(lines)
    assert loaded.format == "toolwire"
    assert loaded.messages == tuple(history)
    assert (
        load_transcript("\n".join(json.dumps(m) for m in OPENAI_MESSAGES)).format == "openai-chat"
    )


def test_mid_conversation_system_message_in_an_anthropic_list() -> None:
    messages = [*ANTHROPIC_MESSAGES[:2], {"role": "system", "content": "reminder"}]
    assert detect_format(messages) == "anthropic"
    assert [m.role for m in import_transcript(messages).messages] == ["user", "assistant"]


def test_plain_text_chat_reads_the_same_either_way() -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(chat) == "anthropic"
    assert import_transcript(chat).messages[1] == Message("assistant", (TextPart("hello"),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json at all", "not JSON"),
        ('{"a": 1}\n{oops', "not JSON (nor JSON lines): line 2"),
        ("42", "expected a JSON array or object"),
        ('{"model": "x"}', "expected a message list or a body with 'messages'"),
        ('[{"content": "no role"}]', "message 1 has no role"),
        ('[{"role": "wizard", "content": "x"}]', "unknown Anthropic role"),
        (
            '[{"role": "tool", "content": "x"}, {"role": "critic", "content": "y"}]',
            "unknown OpenAI role",
        ),
        ('[{"role": "user", "content": 5}]', "content must be a string or a list"),
        (
            '[{"role": "tool", "tool_call_id": "x", "content": "r"},'
            ' {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "y"}]}]',
            "mixes Anthropic and OpenAI",
        ),
    ],
)
def test_bad_input_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(TranscriptError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_transcript(text)

"""Images in each provider's request body (exact JSON shapes), and notes where none go."""

from __future__ import annotations

import base64
from typing import Any

from tests.helpers import tiny_png
from toolwire.backends import anthropic, gemini, openai_chat, openai_responses
from toolwire.backends.base import ModelRequest
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    tool_results,
)

PNG = tiny_png()
DATA = base64.b64encode(PNG).decode()
IMAGE = ImagePart("image/png", DATA)
URL = ImagePart("image/jpeg", url="https://example.test/cat.jpg")
NOTE = f"[image: image/png, {len(PNG)} B, not sent: this model takes no images]"


def _prompt(*parts: Any) -> ModelRequest:
    return ModelRequest(system="", messages=(Message("user", parts),), max_tokens=10)


def _read_turn() -> ModelRequest:
    """A Read call answered with an image, then the user's question."""
    call = ToolCallPart("toolu_1", "Read", {"file_path": "logo.png"})
    result = ToolResultPart("toolu_1", "Read", "The image logo.png is attached.", images=(IMAGE,))
    history = (
        Message("user", (TextPart("look at the logo"),)),
        Message("assistant", (call,), backend="b"),
        tool_results([result]),
    )
    return ModelRequest(system="", messages=history, max_tokens=10)


def test_anthropic_user_image_is_a_base64_image_block() -> None:
    body = anthropic.build_body(
        _prompt(TextPart("what is this?"), IMAGE, URL), model="m", backend="b"
    )
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": DATA},
                },
                {"type": "image", "source": {"type": "url", "url": URL.url}},
            ],
        }
    ]


def test_anthropic_tool_result_carries_the_image() -> None:
    body = anthropic.build_body(_read_turn(), model="m", backend="b")
    assert body["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": "The image logo.png is attached."},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": DATA},
                },
            ],
        }
    ]


def test_openai_chat_user_image_is_a_data_url_in_a_content_array() -> None:
    body = openai_chat.build_body(_prompt(TextPart("what?"), IMAGE), model="m", backend="b")
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
            ],
        }
    ]


def test_openai_chat_text_only_user_message_stays_a_string() -> None:
    body = openai_chat.build_body(_prompt(TextPart("hi")), model="m", backend="b")
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_openai_chat_result_image_follows_in_a_user_message() -> None:
    messages = openai_chat.build_body(_read_turn(), model="m", backend="b")["messages"]
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "toolu_1",
        "content": "The image logo.png is attached.\n"
        f"[image: image/png, {len(PNG)} B, sent in the next user message]",
    }
    assert messages[3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images from the Read result:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
        ],
    }
    assert len(messages) == 4


def test_responses_user_image_is_an_input_image() -> None:
    body = openai_responses.build_body(_prompt(TextPart("what?"), IMAGE), model="m", backend="b")
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "what?"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{DATA}",
                    "detail": "auto",
                },
            ],
        }
    ]


def test_responses_function_output_holds_the_image() -> None:
    items = openai_responses.build_body(_read_turn(), model="m", backend="b")["input"]
    assert items[2] == {
        "type": "function_call_output",
        "call_id": "toolu_1",
        "output": [
            {"type": "input_text", "text": "The image logo.png is attached."},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{DATA}",
                "detail": "auto",
            },
        ],
    }


def test_gemini_user_image_is_inline_data_and_a_url_is_file_data() -> None:
    body = gemini.build_body(_prompt(TextPart("what?"), IMAGE, URL), model="m", backend="b")
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "what?"},
                {"inlineData": {"mimeType": "image/png", "data": DATA}},
                {"fileData": {"fileUri": URL.url, "mimeType": "image/jpeg"}},
            ],
        }
    ]


def test_gemini_function_response_gets_a_note() -> None:
    contents = gemini.build_body(_read_turn(), model="m", backend="b")["contents"]
    response = contents[2]["parts"][0]["functionResponse"]["response"]
    assert response == {
        "output": "The image logo.png is attached.\n"
        f"[image: image/png, {len(PNG)} B, not sent: a function response carries no images here]"
    }
    assert "inlineData" not in str(contents)


def test_vision_false_sends_a_note_and_never_the_bytes() -> None:
    request = _prompt(TextPart("what?"), IMAGE)
    for build in (anthropic.build_body, openai_chat.build_body, openai_responses.build_body):
        body = build(request, model="m", backend="b", vision=False)
        assert DATA not in str(body)
        assert NOTE in str(body)
    body = gemini.build_body(_read_turn(), model="m", backend="b", vision=False)
    assert DATA not in str(body)


def test_text_tool_formats_send_notes() -> None:
    for fmt in ("hermes", "xml-tags"):
        body = openai_chat.build_body(_read_turn(), model="m", backend="b", tool_format=fmt)
        assert DATA not in str(body)
        assert NOTE in body["messages"][-1]["content"]

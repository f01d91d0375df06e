"""Anthropic image blocks through the proxy: OpenAI and Gemini get the images."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from tests.fakes.http import FakeServer, Reply
from tests.helpers import tiny_png
from tests.proxy.support import (
    openai_text_stream,
    post_messages,
    request_body,
    running,
    settings_for,
)
from toolwire.backends import gemini, openai_chat
from toolwire.history import ImagePart
from toolwire.proxy.translate import import_history, to_model_request

DATA = base64.b64encode(tiny_png()).decode()
URL = "https://example.test/cat.jpg"
BASE64_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": DATA},
}
URL_BLOCK = {"type": "image", "source": {"type": "url", "url": URL}}


def _history() -> list[dict[str, Any]]:
    """A screenshot in the prompt, then a Read whose result holds an image."""
    return [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is on screen?"}, BASE64_BLOCK, URL_BLOCK],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "the file"}, BASE64_BLOCK],
                }
            ],
        },
    ]


def test_image_blocks_import_as_image_parts() -> None:
    messages = import_history(request_body(_history()))
    assert messages[0].parts[1:] == (ImagePart("image/png", DATA), ImagePart("", url=URL))
    result = messages[2].parts[0]
    assert result.content == "the file"  # type: ignore[union-attr]
    assert result.images == (ImagePart("image/png", DATA),)  # type: ignore[union-attr]


def test_images_reach_openai_chat_and_gemini_in_their_forms() -> None:
    body = request_body(_history())
    request = to_model_request(body, import_history(body))
    chat = openai_chat.build_body(request, model="m", backend="local")["messages"]
    user = next(m for m in chat if m["role"] == "user")
    assert user["content"][1:] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
        {"type": "image_url", "image_url": {"url": URL}},
    ]
    assert chat[-1]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{DATA}"
    contents = gemini.build_body(request, model="m", backend="g")["contents"]
    assert contents[0]["parts"][1:] == [
        {"inlineData": {"mimeType": "image/png", "data": DATA}},
        {"fileData": {"fileUri": URL}},
    ]
    assert "[image]" not in str(chat) + str(contents)


def test_proxy_sends_the_image_upstream(tmp_path: Path) -> None:
    with FakeServer() as upstream:
        upstream.script(Reply(chunks=openai_text_stream("A red square.")))
        settings = settings_for(tmp_path, upstream.url, upstream.url)
        with running(settings) as url:
            post_messages(url, _history()[:1])
    (sent,) = upstream.requests
    user = sent.json()["messages"][-1]
    assert user["content"] == [
        {"type": "text", "text": "What is on screen?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
        {"type": "image_url", "image_url": {"url": URL}},
    ]

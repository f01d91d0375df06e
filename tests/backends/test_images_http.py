"""Images as each backend sends them to a fake server (the request bodies, exactly)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.backends.support import FAST, KEY, collect
from tests.fakes.http import FakeServer, Reply
from tests.helpers import tiny_png
from toolwire.backends import create_backend
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.base import ModelRequest
from toolwire.backends.gemini import GeminiBackend
from toolwire.backends.http import HTTPBackend
from toolwire.backends.openai_chat import OpenAIChatBackend
from toolwire.backends.openai_responses import OpenAIResponsesBackend
from toolwire.config.schema import BackendConfig
from toolwire.history import ImagePart, Message, TextPart

DATA = base64.b64encode(tiny_png()).decode()
REQUEST = ModelRequest(
    system="",
    messages=(Message("user", (TextPart("what is this?"), ImagePart("image/png", DATA))),),
    max_tokens=10,
)
DATA_URL = f"data:image/png;base64,{DATA}"
EXPECTED: dict[type[HTTPBackend], tuple[str, Any]] = {
    AnthropicBackend: (
        "messages",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": DATA},
                    },
                ],
            }
        ],
    ),
    OpenAIChatBackend: (
        "messages",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": DATA_URL}},
                ],
            }
        ],
    ),
    OpenAIResponsesBackend: (
        "input",
        [
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "what is this?"},
                    {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
                ],
            }
        ],
    ),
    GeminiBackend: (
        "contents",
        [
            {
                "role": "user",
                "parts": [
                    {"text": "what is this?"},
                    {"inlineData": {"mimeType": "image/png", "data": DATA}},
                ],
            }
        ],
    ),
}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda c: c.provider)
def test_each_backend_posts_the_image_in_its_form(cls: type[HTTPBackend]) -> None:
    with FakeServer() as server:
        server.script(Reply(chunks=[b"data: {}\n\n"]))
        backend = cls(name="b", model="m", api_key=KEY, base_url=server.url, settings=FAST)
        collect(backend.stream(REQUEST))  # what comes back does not matter here
    key, expected = EXPECTED[cls]
    assert server.requests[0].json()[key] == expected


def test_vision_false_in_the_config_reaches_the_backend() -> None:
    config = BackendConfig(name="local", provider="openai-chat", model="m", vision=False)
    backend = create_backend(config, environ={})
    assert isinstance(backend, HTTPBackend)
    assert backend.vision is False
    body = backend.build_body(REQUEST)
    assert DATA not in str(body)
    assert body["messages"][0]["content"].startswith("what is this?\n[image: image/png")

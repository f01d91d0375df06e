"""Anthropic image blocks through the proxy: OpenAI and Gemini get the images."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Reply
from tests.helpers import tiny_png
from tests.proxy.support import (
    openai_text_stream,
    post_messages,
    request_body,
    running,
    settings_for,
    write_config,
)
from toolwire.backends import gemini, openai_chat
from toolwire.context.tokens import IMAGE_TOKENS
from toolwire.history import ImagePart
from toolwire.proxy import load_settings
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


def _noise_png(side: int) -> bytes:
    """A valid PNG of random pixels (it does not compress: a screenshot-sized payload)."""
    import random
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    noise = random.Random(0)
    rows = b"".join(b"\x00" + noise.randbytes(3 * side) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    idat = zlib.compress(rows, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("model", ["claude-opus-5-5", "claude,claude-up"])
def test_count_tokens_counts_a_screenshot_as_an_image_not_as_its_base64(
    tmp_path: Path, model: str
) -> None:
    # Providers bill an image by its pixels (at most about 1,600 tokens), not by the length
    # of its base64: a 300 KB screenshot counted as text would read as 100k tokens and make
    # Claude Code (and the proxy) compact a session that is nowhere near full.
    shot = base64.b64encode(_noise_png(300)).decode()
    assert len(shot) > 300_000
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}}
    text_only = [{"role": "user", "content": [{"type": "text", "text": "What is on screen?"}]}]
    with_shot = [{"role": "user", "content": [*text_only[0]["content"], block]}]
    # Unscaled: the backend's own count (``scale.py`` maps it to Claude's window).
    config = write_config(tmp_path, "http://127.0.0.1:9", "http://127.0.0.1:9")
    settings = load_settings(config, scale_usage=False)
    counts = []
    with running(settings) as url:
        for messages in (text_only, with_shot):
            body = request_body(messages, model=model)
            reply = httpx2.post(f"{url}/v1/messages/count_tokens", json=body, timeout=10)
            counts.append(reply.json()["input_tokens"])
    plain, shown = counts
    assert 0 < shown - plain <= IMAGE_TOKENS + 50

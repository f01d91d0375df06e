"""Images in ACP sessions: a prompt's image blocks and ``Read`` of a PNG reach the model.

An Anthropic backend gets image blocks (in the user message, in the tool result); a
backend marked ``vision = false`` gets a one-line note, and the user is told once.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import image_block, text_block

from tests.agent.pair import agent_under_test
from tests.agent.support import answer, calls_by_id, check_wire, text_of
from tests.helpers import tiny_png
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio

PNG = tiny_png()
DATA = base64.b64encode(PNG).decode()
SOURCE = {"type": "base64", "media_type": "image/png", "data": DATA}
IMAGE_BLOCK = {"type": "image", "source": SOURCE}
NOT_AN_IMAGE = "not a PNG, JPEG, GIF or WebP image"
NOTE = f"[image: image/png, {len(PNG)} B, not sent: this model takes no images]"


async def _session(
    tmp_path: Path, replies: Sequence[Answer], prompts: list[list[Any]], extra: str = ""
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Run ``prompts`` in one session on a model giving ``replies``; the bodies the agent
    sent, the session's notifications, and the ``initialize`` capabilities."""
    async with agent_under_test(tmp_path, config=extra) as acp:
        (acp.root / "logo.png").write_bytes(PNG)
        acp.model.script(*replies)
        sid = await acp.start()
        for prompt in prompts:
            result = await acp.run.conn.prompt(session_id=sid, prompt=prompt)
            assert result.stop_reason == "end_turn"
        check_wire(acp.run.wire)
        init = next(e for e in acp.run.wire if "agentCapabilities" in str(e.message))
        seen = init.message["result"]["agentCapabilities"]["promptCapabilities"]
        return acp.model.bodies, acp.run.notifications(), seen


def _user_content(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body["messages"]
    return [b for b in messages[-1]["content"] if b["type"] != "text" or b["text"]]


def _without_cache(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


async def test_a_prompt_image_reaches_anthropic_as_an_image_block(tmp_path: Path) -> None:
    prompt = [text_block("What is this?"), image_block(DATA, "image/png")]
    requests, notes, caps = await _session(tmp_path, [answer(("text", "A red square."))], [prompt])
    assert caps["image"] is True
    assert _without_cache(_user_content(requests[0])) == [
        {"type": "text", "text": "What is this?"},
        IMAGE_BLOCK,
    ]
    assert "takes no images" not in text_of(notes)


async def test_read_of_a_png_sends_the_image_in_the_tool_result(tmp_path: Path) -> None:
    replies = [
        answer(("tool", "Read", {"file_path": "logo.png"}, "toolu_1")),
        answer(("text", "It is red.")),
    ]
    requests, notes, _ = await _session(tmp_path, replies, [[text_block("Look at logo.png")]])
    card = calls_by_id(notes)["toolu_1"]
    assert card["status"] == "completed"
    assert card["content"][1] == {
        "type": "content",
        "content": {"type": "image", "data": DATA, "mimeType": "image/png"},
    }
    (result,) = _without_cache(requests[1]["messages"][-1]["content"])
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"][1] == IMAGE_BLOCK
    assert result["content"][0]["text"].startswith("The image logo.png (image/png")


async def test_vision_false_sends_notes_and_tells_the_user_once(tmp_path: Path) -> None:
    replies = [
        answer(("tool", "Read", {"file_path": "logo.png"}, "toolu_1")),
        answer(("text", "Noted.")),
        answer(("text", "Again.")),
    ]
    prompt = [text_block("What is this?"), image_block(DATA, "image/png")]
    requests, notes, _ = await _session(
        tmp_path, replies, [prompt, prompt], extra="vision = false\n"
    )
    for sent in requests:
        assert DATA not in json.dumps(sent)
    assert _without_cache(_user_content(requests[0]))[-1] == {"type": "text", "text": "\n" + NOTE}
    result = requests[1]["messages"][-1]["content"][0]
    assert NOTE in result["content"]
    assert text_of(notes).count("takes no images") == 1


async def test_vision_false_read_of_a_png_sends_a_note_and_tells_the_user(tmp_path: Path) -> None:
    replies = [
        answer(("tool", "Read", {"file_path": "logo.png"}, "toolu_1")),
        answer(("text", "Noted.")),
    ]
    requests, notes, _ = await _session(
        tmp_path, replies, [[text_block("Look at logo.png")]], extra="vision = false\n"
    )
    result = requests[1]["messages"][-1]["content"][0]
    assert result["content"].endswith(NOTE)
    assert DATA not in json.dumps(requests[1])
    assert text_of(notes).count("takes no images") == 1


async def test_an_image_without_data_or_web_uri_becomes_a_note(tmp_path: Path) -> None:
    prompt = [text_block("see"), image_block("", "image/png", uri="file:///tmp/x.png")]
    requests, _, _ = await _session(tmp_path, [answer(("text", "ok"))], [prompt])
    texts = [b["text"] for b in _user_content(requests[0])]
    assert texts == ["see\n\n[image file:///tmp/x.png not included: it came without data]"]


async def test_a_mislabelled_image_gets_its_real_type_and_a_non_image_a_note(
    tmp_path: Path,
) -> None:
    junk = base64.b64encode(b"BM not a png at all").decode()
    prompt = [image_block(DATA, "image/jpeg"), image_block(junk, "image/bmp")]
    requests, _, _ = await _session(tmp_path, [answer(("text", "ok"))], [prompt])
    assert _without_cache(_user_content(requests[0])) == [
        IMAGE_BLOCK,
        {
            "type": "text",
            "text": "[image: image/bmp, 19 B, not sent: not a PNG, JPEG, GIF or WebP image]",
        },
    ]

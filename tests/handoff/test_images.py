"""Images in a handoff or compaction: kept as one-line notes, never as bytes."""

from __future__ import annotations

import base64

from tests.helpers import tiny_png
from toolwire.context.tokens import IMAGE_TOKENS, estimate_message
from toolwire.handoff import plan_handoff
from toolwire.handoff.render import render_messages
from toolwire.handoff.summarize import transcript
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    tool_results,
)

PNG = tiny_png(40, 40)
DATA = base64.b64encode(PNG).decode()
IMAGE = ImagePart("image/png", DATA)


def _history() -> list[Message]:
    return [
        Message("user", (TextPart("what is in logo.png?"), IMAGE)),
        Message("assistant", (ToolCallPart("c1", "Read", {"file_path": "logo.png"}),), backend="a"),
        tool_results([ToolResultPart("c1", "Read", "The image is attached.", images=(IMAGE,))]),
        Message("assistant", (TextPart("A red square."),), backend="a"),
        Message("user", (TextPart("and now?"), IMAGE)),
    ]


def test_the_handoff_carries_notes_not_bytes() -> None:
    for keep_last in (0, 1, 5):
        handoff = plan_handoff(_history(), keep_last=keep_last).finish(None)
        sent = str(handoff.context())
        assert DATA not in sent
        assert DATA not in handoff.block
    handoff = plan_handoff(_history(), keep_last=5).finish(None)
    first = handoff.context()[0]
    assert first.parts[-1] == TextPart(f"\n[image: image/png, {len(PNG)} B]")


def test_later_messages_keep_their_images() -> None:
    handoff = plan_handoff(_history(), switch_at=4, keep_last=1).finish(None)
    later = handoff.apply(_history())
    assert later[-1].parts[-1] == IMAGE


def test_render_and_summarizer_transcript_name_the_image() -> None:
    note = f"[image: image/png, {len(PNG)} B]"
    rendered = render_messages(_history())
    assert note in rendered
    assert DATA not in rendered
    text = transcript(_history(), 10_000)
    assert note in text
    assert DATA not in text


def test_an_image_costs_a_fixed_number_of_tokens() -> None:
    big = ImagePart("image/png", "A" * 4_000_000)
    small = ImagePart("image/png", "AAAA")
    cost_big = estimate_message(Message("user", (big,)))
    assert cost_big == estimate_message(Message("user", (small,)))
    assert IMAGE_TOKENS <= cost_big < IMAGE_TOKENS + 20
    result = ToolResultPart("c", "Read", "", images=(big, big))
    assert estimate_message(Message("tool", (result,))) >= 2 * IMAGE_TOKENS


def test_the_block_names_an_image_a_read_returned() -> None:
    handoff = plan_handoff(_history(), switch_at=4, keep_last=0).finish(None)
    assert f"[image: image/png, {len(PNG)} B, not carried over]" in handoff.block
    assert DATA not in handoff.block

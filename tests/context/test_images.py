"""Compaction of a history with images: notes in what is sent, never the bytes."""

from __future__ import annotations

import base64
import dataclasses

from tests.context.support import read_loop
from tests.helpers import tiny_png
from toolwire.backends.anthropic import build_body
from toolwire.backends.base import ModelRequest
from toolwire.context import Budget, build_compaction, window_for
from toolwire.history import ImagePart, Message, TextPart, ToolResultPart

DATA = base64.b64encode(tiny_png(64, 64)).decode()
IMAGE = ImagePart("image/png", DATA)
WINDOW = window_for("small-model", context_window=24_000, max_output_tokens=2_048)


def _with_images(history: list[Message]) -> list[Message]:
    """``history`` with a screenshot in its first prompt and an image on every result."""
    out = [dataclasses.replace(history[0], parts=(*history[0].parts, IMAGE))]
    for message in history[1:]:
        parts = tuple(
            dataclasses.replace(p, images=(IMAGE,)) if isinstance(p, ToolResultPart) else p
            for p in message.parts
        )
        out.append(dataclasses.replace(message, parts=parts))
    return out


def test_a_compacted_history_sends_image_notes_not_bytes() -> None:
    history = _with_images(read_loop(30))
    compaction = build_compaction(history, Budget(WINDOW, 2_000), cwd="/project", target="small")
    sent = compaction.handoff.apply(history)
    body = build_body(ModelRequest(system="s", messages=tuple(sent)), model="m", backend="small")
    assert DATA not in str(body)
    assert DATA not in compaction.handoff.block
    assert "[image: image/png" in str(body)
    assert compaction.after_tokens < compaction.before_tokens


def test_images_after_the_compaction_still_go_to_the_model() -> None:
    history = _with_images(read_loop(30))
    compaction = build_compaction(history, Budget(WINDOW, 2_000), cwd="/project", target="small")
    later = [*history, Message("user", (TextPart("and this one?"), IMAGE))]
    body = build_body(
        ModelRequest(system="s", messages=tuple(compaction.handoff.apply(later))),
        model="m",
        backend="small",
    )
    assert str(body).count(DATA) == 1

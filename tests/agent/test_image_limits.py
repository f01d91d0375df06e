"""No image wedges a session: what a user pastes, ``Read`` finds or an MCP tool returns
is fitted before any provider sees it, and the editor's copy and the store stay small.

The model refuses images as Anthropic's API does (``strict_anthropic``); each
scenario runs a second prompt after the first, since an image the API refuses stays in
the history and refuses every later request of the session too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from acp import image_block, text_block
from acp.schema import McpServerStdio
from PIL import Image

from tests.agent.pair import agent_under_test
from tests.agent.strict_anthropic import StrictAnthropic, images_sent, problem
from tests.agent.support import answer, calls_by_id, check_wire, project
from tests.imaging.images import b64, encode, screenshot_4k
from tests.mcp.support import EDGE
from toolwire.agent.store.database import SessionDatabase
from toolwire.history import ImagePart, Message, TextPart
from toolwire.testing.function import Answer

pytestmark = pytest.mark.anyio

GARBAGE_PNG = encode(Image.new("RGB", (64, 48)))[:33] + b"\x00junk" * 500
"""A PNG signature and header, then garbage: the first bytes say PNG, the rest is not."""
LINE_CAP = 3 * 1024 * 1024
"""No ``session/update`` line the editor gets may be longer (the fitted image's cap, 2 MB
of base64, plus the rest of the card)."""


async def _run(
    tmp_path: Path,
    replies: Sequence[Answer],
    prompts: list[list[Any]],
    servers: list[Any] | None = None,
) -> tuple[StrictAnthropic, list[dict[str, Any]], list[dict[str, Any]], list[int]]:
    """Run ``prompts`` in one session; the model, the bodies it was sent, the
    notifications and the length of every line the agent wrote."""
    async with agent_under_test(tmp_path) as acp:
        (acp.root / "shot.png").write_bytes(screenshot_4k())
        (acp.root / "broken.png").write_bytes(GARBAGE_PNG)
        model = StrictAnthropic(acp.model, replies)
        acp.model.function = model
        acp.client.answers = ["allow_always"]
        await acp.run.conn.initialize(protocol_version=1)
        made = await acp.run.conn.new_session(cwd=str(acp.root), mcp_servers=servers or [])
        for prompt in prompts:
            done = await acp.run.conn.prompt(session_id=made.session_id, prompt=prompt)
            assert done.stop_reason == "end_turn"
        check_wire(acp.run.wire)
        lines = [len(json.dumps(m)) for m in acp.run.sent()]
        return model, acp.model.bodies, acp.run.notifications(), lines


def _all_valid(model: StrictAnthropic, bodies: list[dict[str, Any]], requests: int) -> None:
    assert model.refused == []
    assert len(bodies) == requests
    for body in bodies:
        assert all(problem(s) is None for s in images_sent(body))


def _db(tmp_path: Path) -> int:
    """The size of the session store, its write-ahead log included."""
    store = tmp_path / "data" / "toolwire"
    return sum(p.stat().st_size for p in store.glob("sessions.db*"))


async def test_a_garbage_png_and_a_12_mb_screenshot_in_a_prompt_do_not_wedge_the_session(
    tmp_path: Path,
) -> None:
    prompt = [
        text_block("What is on these?"),
        image_block(b64(GARBAGE_PNG), "image/png"),
        image_block(b64(screenshot_4k()), "image/png"),
    ]
    replies = [answer(("text", "A screen.")), answer(("text", "Still here."))]
    model, sent, _, _ = await _run(tmp_path, replies, [prompt, [text_block("And now?")]])
    _all_valid(model, sent, 2)
    first = sent[1]["messages"][0]["content"]
    notes = [b["text"] for b in first if b["type"] == "text"]
    assert any("not sent: the data is not a valid PNG image" in n for n in notes)
    (image,) = images_sent(sent[1])
    assert len(image["data"]) < len(b64(screenshot_4k())) // 3
    assert _db(tmp_path) < 8 * 1024 * 1024


async def test_read_of_a_12_mb_screenshot_and_of_a_broken_png_do_not_wedge_the_session(
    tmp_path: Path,
) -> None:
    replies = [
        answer(
            ("tool", "Read", {"file_path": "shot.png"}, "toolu_shot"),
            ("tool", "Read", {"file_path": "broken.png"}, "toolu_broken"),
        ),
        answer(("text", "A screen.")),
        answer(("text", "Still here.")),
    ]
    prompts = [[text_block("Look at shot.png and broken.png")], [text_block("And now?")]]
    model, sent, notes, lines = await _run(tmp_path, replies, prompts)
    _all_valid(model, sent, 3)
    results = [b for b in sent[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    shot, broken = results
    assert [b["type"] for b in shot["content"]] == ["text", "image"]
    assert "not sent: the data is not a valid PNG image" in json.dumps(broken["content"])
    assert calls_by_id(notes)["toolu_shot"]["status"] == "completed"
    assert max(lines) < LINE_CAP


def _edge() -> McpServerStdio:
    return McpServerStdio(name="edge", command=sys.executable, args=[str(EDGE), "serve"], env=[])


@pytest.mark.e2e
@pytest.mark.slow
async def test_a_20_mb_image_from_an_mcp_tool_is_fitted_for_the_model_and_capped_for_the_editor(
    tmp_path: Path,
) -> None:
    call = ("tool", "mcp__edge__picture", {"megabytes": 20}, "toolu_pic")
    replies = [
        answer(call),
        answer(("text", "Noise.")),
        answer(("text", "Still here.")),
    ]
    prompts = [[text_block("Take a capture")], [text_block("And now?")]]
    model, sent, notes, lines = await _run(tmp_path, replies, prompts, [_edge()])
    _all_valid(model, sent, 3)
    (image,) = images_sent(sent[1])
    assert image["media_type"] == "image/jpeg"
    assert calls_by_id(notes)["toolu_pic"]["status"] == "completed"
    assert max(lines) < LINE_CAP
    assert _db(tmp_path) < 8 * 1024 * 1024


@pytest.mark.e2e
@pytest.mark.slow
async def test_20_mb_of_structured_content_is_capped_in_raw_output_and_in_the_store(
    tmp_path: Path,
) -> None:
    call = ("tool", "mcp__edge__records", {"megabytes": 20}, "toolu_rows")
    replies = [answer(call), answer(("text", "Rows."))]
    model, sent, notes, lines = await _run(
        tmp_path, replies, [[text_block("List them")]], [_edge()]
    )
    _all_valid(model, sent, 2)
    card = calls_by_id(notes)["toolu_rows"]
    assert card["status"] == "completed"
    raw = card["rawOutput"]
    assert len(json.dumps(raw)) < 100_000
    assert "bytes not shown" in json.dumps(raw)
    assert max(lines) < 200_000
    assert _db(tmp_path) < 2 * 1024 * 1024


async def test_a_broken_image_stored_by_an_older_version_is_not_sent_after_session_load(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    store = tmp_path / "data" / "toolwire" / "sessions.db"  # the agent's (its XDG_DATA_HOME)
    store.parent.mkdir(parents=True)
    with SessionDatabase(store) as db:
        made = db.create(str(root))
        broken = ImagePart("image/png", b64(GARBAGE_PNG))  # as the header check let through
        db.append_messages(made.id, [Message("user", (TextPart("see"), broken))])
        db.append_messages(made.id, [Message("assistant", (TextPart("A picture."),))])
    async with agent_under_test(tmp_path) as acp:
        model = StrictAnthropic(acp.model, [answer(("text", "Still here."))])
        acp.model.function = model
        await acp.run.conn.initialize(protocol_version=1)
        await acp.run.conn.load_session(cwd=str(root), session_id=made.id, mcp_servers=[])
        done = await acp.run.conn.prompt(session_id=made.id, prompt=[text_block("And now?")])
        assert done.stop_reason == "end_turn"
        check_wire(acp.run.wire)
    _all_valid(model, acp.model.bodies, 1)
    first = acp.model.bodies[0]["messages"][0]["content"]
    assert "not sent: the data is not a valid PNG image" in json.dumps(first)

"""An image the provider refuses does not wedge the session.

A stored history holds an image the provider refuses though it decodes here (a provider
may refuse what no local check can foresee; a history stored before images were checked
is mended on load, tests/agent/test_image_limits.py). The fake provider refuses every
request that carries it, with the provider's own 400 body naming the block, as Anthropic
and OpenAI Chat do. The prompt still completes (the image becomes its note, the user is
told in one line, the request is sent once more), the next prompt's request holds the
note, and so does the first request after a restart and a ``session/load``. Each process
is a real ``toolwire acp`` driven by the official SDK; the refusals within one prompt run
on the ``acp`` fixture, the refusal an ``ErrorResponse``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from acp import image_block, text_block

from tests.agent.pair import AgentUnderTest
from tests.agent.support import (
    KEY,
    ScriptedClient,
    check_wire,
    environment,
    fake_backend,
    project,
    response,
    spawn_agent,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply
from tests.helpers import path_to, tiny_png
from toolwire.agent.store.database import SessionDatabase
from toolwire.backends.base import ModelRequest
from toolwire.history import ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from toolwire.testing.function import Answer, ErrorResponse

# A valid image (it passes toolwire's own checks) that the fake provider refuses.
BAD = base64.b64encode(tiny_png(5, 7)).decode()
SAID = "Could not process image"
NOTE = ImagePart("image/png", BAD).note(f"not sent: the model refused it ({SAID})")
TOLD = (
    f"The model refused an image ({SAID}); it was replaced by a note and the "
    "request was sent again.\n\n"
)
PNG = base64.b64encode(tiny_png()).decode()


def _anthropic_refusal(body: dict[str, Any], text: str, said: str) -> dict[str, Any] | None:
    """The body of Anthropic's 400 when ``text`` is in an image of ``body``: the path
    names the block (``messages.5.content.0.tool_result.content.1.image.source.base64: ...``)."""
    path = path_to(body["messages"], text)
    if path is None:
        return None
    names: list[str] = ["messages", str(path[0]), "content", str(path[2])]
    if len(path) > 5 and path[4] == "content":  # an image inside a tool_result block
        names += ["tool_result", "content", str(path[5])]
    where = ".".join([*names, "image", "source", "base64"])
    error = {"type": "invalid_request_error", "message": f"{where}: {said}" if said else ""}
    if not said:
        error["message"] = "Could not process image"  # Anthropic's answer names no block
    return {"type": "error", "error": error, "request_id": "req_test"}


def _chat_refusal(body: dict[str, Any], text: str, said: str) -> dict[str, Any] | None:
    """The body of OpenAI Chat's 400 for an image it cannot take: ``invalid_image``, the block in
    ``param`` (``messages[3].content[1].image_url``)."""
    path = path_to(body["messages"], text)
    if path is None:
        return None
    param = f"messages[{path[0]}].content[{path[2]}].image_url"
    error = {
        "message": said,
        "type": "invalid_request_error",
        "param": param,
        "code": "invalid_image",
    }
    return {"error": error}


def _chat_answer(text: str) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test"}
    said = {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]}
    done = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return (
        b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in (said, done)) + b"data: [DONE]\n\n"
    )


class Provider:
    """A fake provider (``anthropic`` or ``openai-chat``) that refuses any request
    carrying ``text`` in an image, with that provider's error body."""

    def __init__(self, text: str, said: str = SAID, wire: str = "anthropic"):
        self.text, self.said, self.wire = text, said, wire
        self.refused: list[Received] = []
        self.accepted: list[Received] = []
        self.server = FakeServer(self.respond)

    def config(self) -> str:
        if self.wire == "anthropic":
            return fake_backend(self.server.url)
        return (
            'default_backend = "gw"\n[backends.gw]\nprovider = "openai-chat"\n'
            f'model = "gpt-test"\nbase_url = "{self.server.url}/v1"\napi_key_env = "TEST_KEY"\n'
        )

    def respond(self, received: Received) -> Reply:
        refuse = _anthropic_refusal if self.wire == "anthropic" else _chat_refusal
        refusal = refuse(received.json(), self.text, self.said)
        if refusal is not None:
            self.refused.append(received)
            return Reply(400, [json.dumps(refusal).encode()], content_type="application/json")
        self.accepted.append(received)
        if self.wire == "anthropic":
            return Reply(chunks=[response(("text", "Fine."), n=len(self.accepted)).encode()])
        return Reply(chunks=[_chat_answer("Fine.")])


def _older_history(sid: str, db_path: Path, where: str) -> None:
    """What an older version stored: a prompt's image or a Read result's, never checked."""
    bad = ImagePart("image/png", BAD)
    if where == "prompt":
        messages = [
            Message("user", (TextPart("What is on this picture?"), bad)),
            Message("assistant", (TextPart("A chart."),), backend="fake"),
        ]
    else:
        call = ToolCallPart("toolu_old", "Read", {"file_path": "chart.png"})
        messages = [
            Message("user", (TextPart("Read chart.png"),)),
            Message("assistant", (TextPart("Reading it."), call), backend="fake"),
            Message("tool", (ToolResultPart("toolu_old", "Read", "chart.png", images=(bad,)),)),
            Message("assistant", (TextPart("A chart."),), backend="fake"),
        ]
    with SessionDatabase(db_path) as db:
        db.append(sid, messages=messages)


async def _prompt(run: Any, sid: str, *blocks: Any) -> str:
    result = await run.conn.prompt(session_id=sid, prompt=list(blocks))
    return str(result.stop_reason)


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize(
    ("wire", "where"),
    [("anthropic", "prompt"), ("anthropic", "tool-result"), ("openai-chat", "tool-result")],
)
def test_a_stored_bad_image_is_noted_told_and_sent_again(
    tmp_path: Path, wire: str, where: str
) -> None:
    said = SAID if wire == "anthropic" else "Invalid image."
    told = TOLD if wire == "anthropic" else TOLD.replace(SAID, "Invalid image")
    note = NOTE if wire == "anthropic" else NOTE.replace(SAID, "Invalid image")
    root = project(tmp_path)
    fake = Provider(BAD, said, wire)
    with fake.server:
        config = write_config(tmp_path, fake.config())
        env = environment(tmp_path, TEST_KEY=KEY)
        db_path = tmp_path / "data" / "toolwire" / "sessions.db"

        async def scenario() -> None:
            async with spawn_agent(
                tmp_path, ScriptedClient(), "--config", str(config), env=env
            ) as run:
                sid = await start(run.conn, root)
                assert await _prompt(run, sid, text_block("hello")) == "end_turn"
            _older_history(sid, db_path, where)

            async with spawn_agent(
                tmp_path, ScriptedClient(), "--config", str(config), env=env
            ) as run:
                await run.conn.initialize(protocol_version=1)
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                shown = len(run.notifications())
                assert await _prompt(run, sid, text_block("What was it?")) == "end_turn"
                assert len(fake.refused) == 1, "the refused request was not the only one"
                notes = run.notifications()[shown:]
                assert told in text_of(notes), text_of(notes)
                assert "Fine." in text_of(notes)
                assert "failed" not in text_of(notes)
                retried = fake.accepted[-1].body.decode()
                assert BAD not in retried
                assert note in retried

                assert await _prompt(run, sid, text_block("And now?")) == "end_turn"
                assert len(fake.refused) == 1
                assert BAD not in fake.accepted[-1].body.decode()
                check_wire(run.wire)

            async with spawn_agent(
                tmp_path, ScriptedClient(), "--config", str(config), env=env
            ) as run:
                await run.conn.initialize(protocol_version=1)
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                assert told in text_of(run.notifications()), "the line is not in the transcript"
                assert await _prompt(run, sid, text_block("Still there?")) == "end_turn"
                assert len(fake.refused) == 1, "the image came back after a restart"
                assert note in fake.accepted[-1].body.decode()
                check_wire(run.wire)

            with SessionDatabase(db_path) as db:
                assert BAD not in json.dumps([repr(m) for m in db.messages(sid)])

        asyncio.run(scenario())


@pytest.mark.anyio
async def test_an_image_refused_without_a_path_and_a_second_refusal(acp: AgentUnderTest) -> None:
    """ "Could not process image" names no block: every image of the conversation becomes
    its note (one here) and the user is told so. A provider that refuses the retry too
    ends the turn with its error, as before: one retry, never a loop."""
    refused: list[str] = []
    accepted: list[str] = []
    refusing = PNG  # the text an image must hold to be refused

    def provider(request: ModelRequest) -> Answer:
        body = acp.model.bodies[-1]
        sent = json.dumps(body)
        refusal = _anthropic_refusal(body, refusing, "")
        if refusal is not None:
            refused.append(sent)
            return ErrorResponse(400, refusal)
        accepted.append(sent)
        return "Fine."

    acp.model.function = provider
    sid = await acp.start()
    picture = [text_block("What is this?"), image_block(PNG, "image/png")]
    assert await _prompt(acp.run, sid, *picture) == "end_turn"
    said = text_of(acp.run.notifications())
    assert (
        "The model refused an image (Could not process image) without saying which; "
        "the conversation's one image was replaced by a note and the request was "
        "sent again.\n\n"
    ) in said
    assert len(refused) == 1
    assert PNG not in accepted[-1]
    assert "Could not process image" in accepted[-1]

    refusing = "Again?"  # now every request is refused, notes or not
    shown = len(acp.run.notifications())
    other = base64.b64encode(tiny_png(3, 3)).decode()
    again = [text_block("Again?"), image_block(other, "image/png")]
    assert await _prompt(acp.run, sid, *again) == "end_turn"
    assert len(refused) == 3, "not exactly one retry"
    said = text_of(acp.run.notifications()[shown:])
    assert "The request to fake (claude-test) failed: HTTP 400" in said
    assert "replaced by a note" in said, "the first refusal was not recovered"
    assert other not in refused[-1]
    check_wire(acp.run.wire)


def test_the_stored_image_is_noted_in_place_and_another_windows_messages_stay(
    tmp_path: Path,
) -> None:
    """The refused image is rewritten where it is stored, found by its content: a message
    another window appended meanwhile (which this window's history lacks) is kept."""
    bad = Message("user", (TextPart("What is on this picture?"), ImagePart("image/png", BAD)))
    answer = Message("assistant", (TextPart("A chart."),), backend="fake")
    elsewhere = Message("user", (TextPart("a prompt from another window"),))
    noted = Message("user", (TextPart("What is on this picture?"), TextPart(NOTE)))
    with SessionDatabase(tmp_path / "sessions.db") as db:
        sid = db.create("/p").id
        db.append(sid, messages=[answer, elsewhere, bad])
        assert db.replace_parts(sid, [(bad, noted)]) == 1
        assert db.messages(sid) == [answer, elsewhere, noted]
        assert db.replace_parts(sid, [(bad, noted)]) == 0

"""A lone surrogate in a prompt or in a model's output poisons nothing.

JSON spells a lone UTF-16 surrogate as ``\\ud83d``; the SDK decodes a prompt holding one
into a ``str`` UTF-8 cannot encode, and so does the decoder for a model's output. The
session must go on: the title and history are stored, the next request is sent (with
U+FFFD), also by a new process that loads the session.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agent.support import (
    ScriptedClient,
    agent,
    check_wire,
    environment,
    fake_backend,
    project,
    response,
    start,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply
from toolwire.agent.store.database import SessionDatabase
from toolwire.backends import encodable
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.base import ModelRequest
from toolwire.history import Message, TextPart, ToolCallPart, user

TEXT = st.text(
    st.one_of(
        st.characters(codec=None, exclude_categories=()),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=30,
)


def _reply(text: str, n: int) -> Reply:
    """A streamed reply whose text holds ``\\ud83d`` as the JSON escape a provider sends."""
    body = response(("text", f"{text} SURROGATE"), n=n).replace("SURROGATE", "\\ud83d")
    assert "\\ud83d" in body
    return Reply(chunks=[body.encode()])


def test_a_lone_surrogate_poisons_neither_the_session_nor_a_restart(tmp_path: Path) -> None:
    root = project(tmp_path)
    with FakeServer() as server:
        server.script(_reply("One", 0), _reply("Two", 1), _reply("Three", 2))
        config = write_config(tmp_path, fake_backend(server.url))
        env = environment(tmp_path, TEST_KEY="k")

        async def first() -> str:
            client = ScriptedClient()
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                sid = await start(run.conn, root)
                for prompt in ("Hi \ud83d", "Again \ude00"):
                    result = await run.conn.prompt(session_id=sid, prompt=[text_block(prompt)])
                    assert result.stop_reason == "end_turn"
                said = text_of(run.notifications())
                assert "One" in said
                assert "Two" in said
                check_wire(run.wire)
                listed = await run.conn.list_sessions()
                assert listed.sessions[0].title == "Hi \ufffd"
                return sid

        async def after_restart(sid: str) -> None:
            client = ScriptedClient()
            async with agent(tmp_path, client, "--config", str(config), env=env) as run:
                await start(run.conn, root)
                await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
                result = await run.conn.prompt(session_id=sid, prompt=[text_block("Once more")])
                assert result.stop_reason == "end_turn"
                assert "Three" in text_of(run.notifications())
                check_wire(run.wire)

        sid = asyncio.run(first())
        asyncio.run(after_restart(sid))
    assert len(server.requests) == 3
    for sent in server.requests:
        body = json.loads(sent.body.decode("utf-8"))  # strict UTF-8: it was encodable
        texts = [b["text"] for m in body["messages"] for b in m["content"] if "text" in b]
        assert all("\ufffd" in t for t in texts if t != "Once more")
    assert "Hi \ufffd" in sent.body.decode()
    assert "Two \ufffd" in sent.body.decode()


@settings(max_examples=40)
@given(text=TEXT)
def test_whatever_text_is_stored_loads_and_makes_an_encodable_request(text: str) -> None:
    with SessionDatabase(":memory:") as db:
        record = db.create(text, [text], session_id=text or "s", title=text, backend=text)
        sid = record.id
        history = [
            user(text),
            Message("assistant", (TextPart(text), ToolCallPart("c1", "Read", {text: text}))),
        ]
        db.append(sid, messages=history, updates=[{"sessionUpdate": "x", "text": text}])
        db.update(sid, title=text, config={text: text})
        assert db.get(text or "s") == db.get(sid)  # the id it was given still finds it
        assert record.title == encodable(text)
        loaded = db.messages(sid)
        assert db.updates(sid)[0]["text"] == text  # JSON keeps it, escaped
        request = ModelRequest(system=text, messages=tuple(loaded), max_tokens=5)
        AnthropicBackend(name="b", model="m").body_text(request).encode("utf-8")

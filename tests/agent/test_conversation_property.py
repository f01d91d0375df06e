"""For any sequence of what a user does, a restart does not change the next request.

Hypothesis draws a sequence of operations (a prompt, one with a tool call, one cancelled
mid-answer, ``/clear``, ``/compact [focus]``, a model switch, a fork, a
``session/delete`` of another session; on the backend with the small window, automatic
compactions) and an in-process agent (A) runs it against two fake models that answer
deterministically, summaries included. Then a second agent (B), with its own store worker
on the same ``sessions.db`` (a restarted process in all but the pid), reopens the session
with ``session/load`` or ``session/resume`` (drawn too) and sends one more prompt; then A,
which never stopped and holds the conversation in memory, sends the same prompt. The two
model requests must be the same bytes. ``test_conversation_restart_e2e.py`` runs the same
operations with a real ``toolwire acp`` process as B.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    environment,
    project,
    response,
    start,
    write_config,
)
from tests.fakes.http import FakeServer, Received, Reply

pytestmark = pytest.mark.slow

EXAMPLES = 200


class Models:
    """Two fake Anthropic-compatible models; ``sent`` is every request body, in order."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def answer(self, request: Received) -> Reply:
        self.sent.append(request.body)
        messages = request.json()["messages"]
        content = messages[-1]["content"]
        last = content[-1] if isinstance(content, list) else {"type": "text", "text": content}
        if last.get("type") == "text" and last["text"].startswith("slow"):
            # Half the answer, then nothing: the user cancels the turn meanwhile.
            body = response(("text", "A long answer that the user cancels")).encode()
            half = body.index(b"\n\n", len(body) // 2) + 2
            return Reply(chunks=[body[:half], body[half:]], stall_after=1)
        if last.get("type") == "text" and last["text"].startswith("read"):
            call = ("tool", "Read", {"file_path": "big.py"}, f"toolu_{len(messages)}")
            return Reply(chunks=[response(("text", "Reading."), call).encode()])
        said = last.get("text", last.get("type", ""))[-30:]
        return Reply(chunks=[response(("text", f"Answer {len(messages)} to {said}")).encode()])


def _config(one: str, two: str) -> str:
    """Two backends; two's window is small enough that a few reads compact it."""
    backends = "".join(
        f'[backends.{name}]\nprovider = "anthropic"\nmodel = "claude-{name}"\n'
        f'base_url = "{url}"\napi_key_env = "TEST_KEY"\n'
        for name, url in (("one", one), ("two", two))
    )
    # File checkpoints (a git snapshot before and after each prompt) never reach a model
    # request; off here, they cost a third of this test's time. The restart tests with
    # a real process (test_conversation_restart_e2e.py) keep them on.
    checkpoints = "[checkpoints]\nenabled = false\n"
    return f'default_backend = "one"\n{checkpoints}{backends}context_window = 16000\n'


# Prompts come up most, so the commands have a conversation to act on.
OPERATIONS = st.sampled_from(
    [
        *["ask"] * 4,
        *["read"] * 2,
        "slow",
        "/clear",
        "/compact",
        "/compact the tests",
        "fork",
        "delete",
        "model one",
        "model two",
    ]
)


RESTARTS = st.sampled_from(["load", "resume"])


async def delete(conn: Any, session_id: str) -> None:
    # The SDK's client has no method for it (its schema predates session/delete).
    await conn._conn.send_request("session/delete", {"sessionId": session_id})


async def run_operations(
    conn: Any, models: Models, root: Path, sid: str, operations: list[str]
) -> str:
    """Run ``operations`` on session ``sid`` through ``conn``; the session they end in
    (a fork moves on to the new one). A delete removes a session other than the current
    one: the one the last fork left, else one made for it."""
    others: list[str] = []
    for n, op in enumerate(operations):
        if op == "fork":
            forked = await conn.fork_session(session_id=sid, cwd=str(root), mcp_servers=[])
            others.append(sid)
            sid = forked.session_id
        elif op == "delete":
            if not others:
                made = await conn.new_session(cwd=str(root), mcp_servers=[])
                others.append(made.session_id)
            await delete(conn, others.pop())
        elif op.startswith("model "):
            await conn.set_config_option(config_id="model", session_id=sid, value=op.split()[1])
        elif op == "slow":  # cancelled mid-answer
            asked = len(models.sent)
            turn = asyncio.ensure_future(
                conn.prompt(session_id=sid, prompt=[text_block(f"slow {n}")])
            )
            while len(models.sent) == asked:
                await asyncio.sleep(0.01)
            await conn.cancel(session_id=sid)
            assert (await turn).stop_reason == "cancelled"
        else:
            text = f"{op} {n}" if op in ("ask", "read") else op
            await conn.prompt(session_id=sid, prompt=[text_block(text)])
    return sid


async def reopen(conn: Any, root: Path, sid: str, how: str) -> None:
    """Open ``sid`` in a newly started agent with ``session/load`` or ``session/resume``."""
    await conn.initialize(protocol_version=1)
    if how == "load":
        await conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
    else:
        await conn.resume_session(cwd=str(root), session_id=sid, mcp_servers=[])


def fill(root: Path) -> None:
    """The file the ``read`` operations read, big enough that a few fill two's window."""
    (root / "big.py").write_text("x = 1  # a line of a file that fills a window\n" * 300)


def next_requests(base: Path, operations: list[str], how: str) -> tuple[bytes, bytes]:
    """The next request after ``operations``: (never restarted, restarted and reopened
    with ``session/load`` or ``session/resume`` as ``how`` says)."""
    root = project(base)
    fill(root)
    models = Models()
    with FakeServer(respond=models.answer) as one, FakeServer(respond=models.answer) as two:
        config = write_config(base, _config(one.url, two.url))
        env = environment(base, TEST_KEY=KEY)
        args = ("--config", str(config))

        async def scenario() -> tuple[bytes, bytes]:
            async with agent(base, ScriptedClient(), *args, env=env) as kept:
                sid = await start(kept.conn, root)
                sid = await run_operations(kept.conn, models, root, sid, operations)
                async with agent(base, ScriptedClient(), *args, env=env) as restarted:
                    await reopen(restarted.conn, root, sid, how)
                    await restarted.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
                    after_restart = models.sent[-1]
                await kept.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
                return models.sent[-1], after_restart

        return asyncio.run(scenario())


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(OPERATIONS, min_size=1, max_size=10), RESTARTS)
def test_a_restart_never_changes_the_next_request(operations: list[str], how: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kept, restarted = next_requests(Path(tmp), operations, how)
    assert json.loads(restarted)["messages"] == json.loads(kept)["messages"]
    assert restarted == kept

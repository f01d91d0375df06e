"""A real ``toolwire acp`` killed mid-turn (SIGKILL: no ``after-1`` is ever taken), the
user editing a file by hand before the next ``/rewind``: after a restart and
``session/load``, ``/rewind 1`` keeps the user's edit as a conflict instead of
overwriting it, and says why."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
from pathlib import Path

import pytest
from acp import text_block

from tests.agent.support import (
    KEY,
    ScriptedClient,
    environment,
    fake_backend,
    response,
    spawn_agent,
    text_of,
    write_config,
)
from tests.fakes.http import FakeServer, Reply

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
WRITE = {"file_path": "new.py", "content": "print('new')\n"}


def test_a_users_edit_after_the_agent_was_killed_mid_turn_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.md").write_text("# notes\n")
    with FakeServer() as server:
        server.script(
            Reply(chunks=[response(("tool", "Write", WRITE, "toolu_w")).encode()]),
            # The turn never ends: the agent is killed while it waits here.
            Reply(chunks=[b": thinking\n\n", b": more\n\n"], stall_after=1),
        )
        config = str(write_config(tmp_path, fake_backend(server.url)))
        env = environment(tmp_path, TEST_KEY=KEY)
        told = asyncio.run(_scenario(tmp_path, root, server, config, env))
    assert (root / "notes.md").read_text() == "# notes\nby hand, after the kill\n"
    assert "notes.md" in told
    assert "not checkpointed" in told


async def _scenario(
    tmp_path: Path, root: Path, server: FakeServer, config: str, env: dict[str, str]
) -> str:
    async with spawn_agent(tmp_path, ScriptedClient(), "--config", config, env=env) as run:
        await run.conn.initialize(protocol_version=1)
        sid = (await run.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
        await run.conn.set_session_mode(session_id=sid, mode_id="bypass")
        turn = asyncio.ensure_future(
            run.conn.prompt(session_id=sid, prompt=[text_block("Add new.py.")])
        )
        for _ in range(200):  # the tool ran and the next model request is waiting
            if (root / "new.py").exists() and len(server.requests) >= 2:
                break
            await asyncio.sleep(0.05)
        run.process.send_signal(signal.SIGKILL)
        await run.process.wait()
        turn.cancel()
        with contextlib.suppress(BaseException):
            await turn
    (root / "notes.md").write_text("# notes\nby hand, after the kill\n")
    async with spawn_agent(tmp_path, ScriptedClient(), "--config", config, env=env) as run:
        await run.conn.initialize(protocol_version=1)
        await run.conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[])
        since = len(run.notifications())
        await run.conn.prompt(session_id=sid, prompt=[text_block("/rewind 1 code")])
        return text_of(run.notifications()[since:])

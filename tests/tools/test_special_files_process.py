"""A named pipe in the project, met by ``toolwire acp`` as an editor runs it.

The model reads, searches and overwrites the pipe; the turn must end (each call fails
with a one-line message) and the process must still end when its stdin closes. A 20 s
guard releases any reader stuck on the pipe, so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from acp import text_block

from tests.agent.support import ScriptedClient, calls_by_id, project, response, spawn_agent, start
from tests.tools.test_special_files import release
from toolwire.testing.streams import write_cassette

pytestmark = pytest.mark.e2e


def test_a_named_pipe_neither_hangs_the_turn_nor_the_exit(tmp_path: Path) -> None:
    root = project(tmp_path)
    fifo = root / "pipe"
    os.mkfifo(fifo)
    cassette = write_cassette(
        tmp_path / "pipe.jsonl",
        [
            response(
                ("tool", "Read", {"file_path": "pipe"}, "toolu_read"),
                ("tool", "Grep", {"pattern": "x"}, "toolu_grep"),
                ("tool", "Write", {"file_path": "pipe", "content": "x\n"}, "toolu_write"),
            ),
            response(("text", "Done."), n=1),
        ],
    )
    client = ScriptedClient(answers=["allow_once"])

    async def scenario() -> None:
        async with spawn_agent(tmp_path, client, "--backend", f"replay:{cassette}") as run:
            sid = await start(run.conn, root)
            try:
                result = await asyncio.wait_for(
                    run.conn.prompt(session_id=sid, prompt=[text_block("Look at the pipe")]),
                    20,
                )
            finally:
                release(fifo)
            assert result.stop_reason == "end_turn"
            calls = calls_by_id(run.notifications())
            for call_id in ("toolu_read", "toolu_write"):
                assert calls[call_id]["status"] == "failed", calls[call_id]
            assert calls["toolu_grep"]["status"] == "completed"
            process = run.process
            assert process.stdin is not None
            process.stdin.close()
            assert await asyncio.wait_for(process.wait(), 20) is not None

    asyncio.run(scenario())
    assert os.path.exists(fifo)
    assert not (root / "pipe").is_file()

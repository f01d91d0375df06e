"""stdio MCP servers do not outlive a ``toolwire acp`` killed with SIGKILL (as editors
stop their agents): the server, though it ignores SIGTERM and its stdin's end, and the
child it started are gone within seconds, also when the server was still starting."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from acp.schema import EnvVariable, McpServerStdio

from tests.agent.support import ScriptedClient, alive, environment, project, spawn_agent
from tests.mcp.support import STUBBORN

pytestmark = pytest.mark.e2e


async def _pids(path: Path) -> list[int]:
    for _ in range(400):
        text = path.read_text(encoding="ascii") if path.exists() else ""
        if text.endswith("\n"):
            return [int(p) for p in text.split()]
        await asyncio.sleep(0.05)
    raise AssertionError("the server never wrote its pids")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["serve", "silent"])
def test_a_sigkilled_agent_takes_its_stubborn_server_and_its_child_along(
    tmp_path: Path, mode: str
) -> None:
    root = project(tmp_path)
    pids_file = tmp_path / "pids.txt"
    env = [EnvVariable(name="STUBBORN_PIDS", value=str(pids_file))]
    server = McpServerStdio(
        name="stubborn", command=sys.executable, args=[str(STUBBORN), mode], env=env
    )
    cassette = tmp_path / "none.jsonl"
    cassette.write_text("", encoding="utf-8")

    async def scenario() -> list[int]:
        client = ScriptedClient()
        async with spawn_agent(
            tmp_path, client, "--backend", f"replay:{cassette}", env=environment(tmp_path)
        ) as run:
            await run.conn.initialize(protocol_version=1)
            await run.conn.new_session(cwd=str(root), mcp_servers=[server])
            pids = await _pids(pids_file)
            if mode == "serve":
                await asyncio.sleep(1.0)  # the start (initialize, tools/list) is over
            run.process.kill()
            await run.process.wait()
            return pids

    pids = asyncio.run(scenario())
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    assert [p for p in pids if alive(p)] == []

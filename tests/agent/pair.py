"""``AgentUnderTest``: what the ``acp`` fixture (tests/agent/conftest.py) hands a test,
and ``agent_under_test``, the pair it runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from acp import text_block
from acp.schema import ClientCapabilities, PromptResponse

from tests.agent.support import (
    KEY,
    ScriptedClient,
    agent,
    environment,
    fake_backend,
    project,
    start,
    write_config,
)
from toolwire.testing import FunctionBackend, InMemoryConnection


@dataclass
class AgentUnderTest:
    """The running pair: ``run`` (the client's end and the wire), the scripted ``client``
    (set ``client.answers`` for permission requests), the ``model``, the project ``root``
    (``app.py`` in it)."""

    run: InMemoryConnection
    client: ScriptedClient
    model: FunctionBackend
    root: Path

    async def start(self, caps: ClientCapabilities | None = None) -> str:
        """initialize, then session/new in ``root``; the session id."""
        return await start(self.run.conn, self.root, caps)

    async def prompt(self, session_id: str, text: str) -> PromptResponse:
        return await self.run.conn.prompt(session_id=session_id, prompt=[text_block(text)])


@asynccontextmanager
async def agent_under_test(tmp_path: Path) -> AsyncIterator[AgentUnderTest]:
    """The agent ``toolwire acp`` runs, its default backend Anthropic's, answered by a
    ``FunctionBackend`` (no function set yet) over its HTTP transport."""
    model = FunctionBackend(model="claude-test")
    client = ScriptedClient()
    config = write_config(tmp_path, fake_backend("http://model.test"))
    env = environment(tmp_path, TEST_KEY=KEY)
    async with (
        httpx2.AsyncClient(transport=model.transport()) as http,
        agent(tmp_path, client, "--config", str(config), env=env, http=http) as run,
    ):
        yield AgentUnderTest(run, client, model, project(tmp_path))

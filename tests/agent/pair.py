"""``AgentUnderTest``: what the ``acp`` fixture (tests/agent/conftest.py) hands a test,
and ``agent_under_test``, the pair it runs (call it for a configuration or environment
of the test's own, or ``acp.again()`` for a second agent on the same store)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from acp import text_block
from acp.schema import ClientCapabilities, PromptResponse

from tests.agent.support import (
    APP,
    KEY,
    ScriptedClient,
    agent,
    environment,
    fake_backend,
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
    tmp_path: Path
    config: str = ""
    env: Mapping[str, str] = field(default_factory=dict)

    async def start(self, caps: ClientCapabilities | None = None) -> str:
        """initialize, then session/new in ``root``; the session id."""
        return await start(self.run.conn, self.root, caps)

    async def prompt(self, session_id: str, text: str) -> PromptResponse:
        return await self.run.conn.prompt(session_id=session_id, prompt=[text_block(text)])

    def again(self) -> AbstractAsyncContextManager[AgentUnderTest]:
        """Another agent on the same store, configuration, model and project, with a
        client of its own (a restart, or a second editor window)."""
        return agent_under_test(self.tmp_path, config=self.config, env=self.env, model=self.model)


@asynccontextmanager
async def agent_under_test(
    tmp_path: Path,
    *,
    config: str = "",
    env: Mapping[str, str] | None = None,
    model: FunctionBackend | None = None,
) -> AsyncIterator[AgentUnderTest]:
    """The agent ``toolwire acp`` runs, its default backend Anthropic's, answered by a
    ``FunctionBackend`` (no function set yet) over its HTTP transport.

    ``config``: TOML added to the configuration (it follows the backend's table, so a
    bare key lands there: ``context_window = 30000``); ``env``: variables in force while
    it runs (``TOOLWIRE_PROFILE``, say); ``model``: a backend to share with another pair.
    """
    model = model or FunctionBackend(model="claude-test")
    client = ScriptedClient()
    path = write_config(tmp_path, fake_backend("http://model.test") + config)
    environ = environment(tmp_path, TEST_KEY=KEY, **(env or {}))
    root = tmp_path / "project"
    if not root.exists():
        root.mkdir()
        (root / "app.py").write_text(APP, encoding="utf-8")
    async with (
        httpx2.AsyncClient(transport=model.transport()) as http,
        agent(tmp_path, client, "--config", str(path), env=environ, http=http) as run,
    ):
        yield AgentUnderTest(run, client, model, root, tmp_path, config, dict(env or {}))

"""``AgentUnderTest``: what the ``acp`` fixture (tests/agent/conftest.py) hands a test,
and ``agent_under_test``, the pair it runs (call it for a configuration or environment
of the test's own, or ``acp.again()`` for a second agent on the same store)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from toolwire.backends.base import ModelRequest
from toolwire.testing import FunctionBackend, InMemoryConnection
from toolwire.testing.function import Answer

#: The model name of the fixture's default backend (``fake``).
MODEL = "claude-test"


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

    def per_model(self, answers: Mapping[str, list[Answer]]) -> None:
        """Each model its own answers, in order (backends added with ``backend_table``
        share this one ``model``; the body each sent names its model)."""
        queues = {name: list(queue) for name, queue in answers.items()}

        def answer(request: ModelRequest) -> Answer:
            name = self.model.bodies[-1]["model"]
            if not queues.get(name):
                raise AssertionError(f"no answer left for {name}")
            return queues[name].pop(0)

        self.model.function = answer

    def sent_to(self, model: str) -> list[dict[str, Any]]:
        """The bodies sent to ``model``, in order."""
        return [body for body in self.model.bodies if body["model"] == model]

    def again(self) -> AbstractAsyncContextManager[AgentUnderTest]:
        """Another agent on the same store, configuration, model and project, with a
        client of its own (a restart, or a second editor window)."""
        return agent_under_test(self.tmp_path, config=self.config, env=self.env, model=self.model)


def backend_table(name: str, model: str, extra: str = "") -> str:
    """TOML for one more Anthropic backend, answered by the same ``FunctionBackend``
    (``config=`` of ``agent_under_test``; ``extra``: more keys of its table)."""
    return (
        f'\n[backends.{name}]\nprovider = "anthropic"\nmodel = "{model}"\n'
        f'base_url = "http://{name}.test"\napi_key_env = "TEST_KEY"\n{extra}'
    )


@asynccontextmanager
async def agent_under_test(
    tmp_path: Path,
    *,
    config: str = "",
    env: Mapping[str, str] | None = None,
    model: FunctionBackend | None = None,
    client: ScriptedClient | None = None,
) -> AsyncIterator[AgentUnderTest]:
    """The agent ``toolwire acp`` runs, its default backend Anthropic's, answered by a
    ``FunctionBackend`` (no function set yet) over its HTTP transport.

    ``config``: TOML added to the configuration (it follows the backend's table, so a
    bare key lands there: ``context_window = 30000``); ``env``: variables in force while
    it runs (``TOOLWIRE_PROFILE``, say); ``model``: a backend to share with another pair;
    ``client``: one that answers differently (a subclass of ``ScriptedClient``).
    """
    model = model or FunctionBackend(model=MODEL)
    client = client or ScriptedClient()
    path = write_config(tmp_path, fake_backend("http://model.test") + config)
    environ = environment(tmp_path, **{"TEST_KEY": KEY, **(env or {})})
    root = tmp_path / "project"
    if not root.exists():
        root.mkdir()
        (root / "app.py").write_text(APP, encoding="utf-8")
    async with (
        httpx2.AsyncClient(transport=model.transport()) as http,
        agent(tmp_path, client, "--config", str(path), env=environ, http=http) as run,
    ):
        yield AgentUnderTest(run, client, model, root, tmp_path, config, dict(env or {}))

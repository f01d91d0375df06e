"""The one fixture for an agent test: ``acp``, the agent and the official SDK client in
this process, the model a Python function (``toolwire.testing.FunctionBackend``).

::

    pytestmark = pytest.mark.anyio

    async def test_it_reads(acp: AgentUnderTest) -> None:
        acp.model.function = lambda request: "Hello."
        sid = await acp.start()
        result = await acp.prompt(sid, "Hi")
        assert result.stop_reason == "end_turn"
        assert text_of(acp.run.notifications()) == "Hello."

The agent is the one ``toolwire acp`` runs, on a configuration whose default backend is
Anthropic's: its real request builder, HTTP path and decoder run, and the requests and
bodies it sent are on ``acp.model`` (``requests``, ``bodies``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agent.pair import AgentUnderTest, agent_under_test


@pytest.fixture
async def acp(tmp_path: Path) -> AsyncIterator[AgentUnderTest]:
    async with agent_under_test(tmp_path) as pair:
        yield pair

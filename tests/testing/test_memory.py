"""``toolwire.testing.connect_in_memory``: an SDK client and agent in one process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)

from toolwire.agent.agent import ToolwireAgent
from toolwire.agent.protocol.outbox import LineSink
from toolwire.agent.store.worker import StoreWorker
from toolwire.config import load_config
from toolwire.testing import InMemoryConnection, connect_in_memory


class _Echo:
    """A minimal SDK agent of our own: it says back what it was told."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.shut = False

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=protocol_version)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="s1")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        said = TextContentBlock(type="text", text=f"echo: {prompt[0].text}")
        chunk = AgentMessageChunk(session_update="agent_message_chunk", content=said)
        await self.conn.session_update(session_id=session_id, update=chunk)
        return PromptResponse(stop_reason="end_turn")

    async def shutdown(self) -> None:
        self.shut = True


class _Listener:
    """The client side: keeps the updates."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


def _pair(agent: Any, client: Any) -> Any:
    return connect_in_memory(agent, client)


def test_any_sdk_agent_served_to_a_client_with_the_wire_recorded() -> None:
    echo, listener = _Echo(), _Listener()

    async def scenario() -> InMemoryConnection:
        async with _pair(echo, listener) as pair:
            await pair.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await pair.conn.new_session(cwd="/", mcp_servers=[])
            answer = await pair.conn.prompt(
                session_id=session.session_id, prompt=[text_block("hi")]
            )
            assert answer.stop_reason == "end_turn"
            await pair.send_raw(b"not json\n")
            await pair.conn.initialize(protocol_version=PROTOCOL_VERSION)  # still serving
            result: InMemoryConnection = pair
            return result

    pair = asyncio.run(scenario())
    assert [u.content.text for u in listener.updates] == ["echo: hi"]
    assert [n["params"]["update"]["content"]["text"] for n in pair.notifications()] == ["echo: hi"]
    errors = [m["error"]["code"] for m in pair.sent() if "error" in m]
    assert errors == [-32700]  # answered by toolwire's transport, not dropped
    assert echo.shut, "the agent's shutdown() runs when the pair closes"


def test_the_toolwire_agent_as_in_the_module_example(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("", encoding="utf-8")
    config = load_config(tmp_path / "config.toml", backend="demo")
    listener = _Listener()

    def make_agent(sink: LineSink) -> ToolwireAgent:
        return ToolwireAgent(config, StoreWorker(":memory:"), sink)

    async def scenario() -> None:
        async with _pair(make_agent, listener) as pair:
            await pair.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await pair.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            listed = await pair.conn.list_sessions()
            assert [s.session_id for s in listed.sessions] == [session.session_id]
            first = pair.notifications()[0]["params"]
            assert first["sessionId"] == session.session_id  # after its session/new answer
            assert first["update"]["sessionUpdate"] == "config_option_update"

    asyncio.run(scenario())

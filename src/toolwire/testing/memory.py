"""An ACP client and agent connected inside one process: drive an agent from a test.

Both ends are the official SDK's connection classes (``acp``): a ``ClientSideConnection``
for your client and an ``AgentSideConnection`` for the agent, joined by a socket pair
(kernel buffers, no subprocess, no files). The agent's end reads and writes through
toolwire's ``StdioTransport``, the code ``toolwire acp`` runs on stdio: malformed lines
are answered, and an agent's ``on_sent``/``on_received`` hooks are called.

Every message is recorded as the client saw it (``wire``: the SDK's ``StreamEvent``s),
so a test can check what went over the wire, in order::

    import asyncio
    from acp import PROTOCOL_VERSION, text_block
    from toolwire.agent.agent import ToolwireAgent
    from toolwire.agent.store.worker import StoreWorker
    from toolwire.config import load_config
    from toolwire.testing import connect_in_memory

    async def main(client) -> None:  # client: an SDK ``acp.Client`` implementation
        config = load_config(None, backend="replay:turn.jsonl")

        def make_agent(sink):
            return ToolwireAgent(config, StoreWorker(":memory:"), sink)

        async with connect_in_memory(make_agent, client) as pair:
            await pair.conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await pair.conn.new_session(cwd="/path/to/project", mcp_servers=[])
            await pair.conn.prompt(session_id=session.session_id, prompt=[text_block("Hi")])
            print(pair.notifications())

On exit the client's end is closed, the agent sees end of input, and an agent with a
``shutdown()`` coroutine (``ToolwireAgent``) is shut down.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.interfaces import Agent, Client

from toolwire.agent.protocol.outbox import LineSink
from toolwire.agent.protocol.transport import LINE_LIMIT, StdioTransport

#: The client's read buffer (a session/load replay or a big diff is one long line).
_CLIENT_LIMIT = 64 * 1024 * 1024


@dataclass
class InMemoryConnection:
    """The client's end of an in-memory pair, and what went over the wire."""

    conn: ClientSideConnection
    agent: Any
    wire: list[StreamEvent] = field(default_factory=list)
    _raw: asyncio.StreamWriter | None = None

    def sent(self) -> list[dict[str, Any]]:
        """Every message the agent wrote, in order."""
        return [e.message for e in self.wire if e.direction == StreamDirection.INCOMING]

    def notifications(self) -> list[dict[str, Any]]:
        """The agent's ``session/update`` notifications, in order."""
        return [m for m in self.sent() if m.get("method") == "session/update"]

    async def send_raw(self, data: bytes) -> None:
        """Bytes to the agent as they are, bypassing the SDK (malformed input, say)."""
        assert self._raw is not None
        self._raw.write(data)
        await self._raw.drain()


@asynccontextmanager
async def connect_in_memory(
    agent: Callable[[LineSink], Agent] | Agent,
    client: Client,
    *,
    use_unstable_protocol: bool = True,
) -> AsyncIterator[InMemoryConnection]:
    """``agent`` (or ``agent(sink)``, given the transport it writes to) served to ``client``.

    ``use_unstable_protocol`` routes ``session/resume`` and ``session/close`` (stable in
    ACP v1, still "unstable" in the SDK), as ``toolwire acp`` does.
    """
    agent_sock, client_sock = socket.socketpair()
    served, agent_conn = await _agent_side(agent, agent_sock, unstable=use_unstable_protocol)
    client_reader, client_writer = await asyncio.open_connection(
        sock=client_sock, limit=_CLIENT_LIMIT
    )
    listening = asyncio.create_task(agent_conn.listen(), name="toolwire.testing.agent")
    wire: list[StreamEvent] = []
    conn = ClientSideConnection(
        client,
        client_writer,
        client_reader,
        use_unstable_protocol=use_unstable_protocol,
        observers=[wire.append],
    )
    pair = InMemoryConnection(conn, served, wire, client_writer)
    try:
        yield pair
    finally:
        await conn.close()
        client_writer.close()  # end of input for the agent
        with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
            await asyncio.wait_for(asyncio.shield(listening), 5)
        await _stop(served, listening, agent_conn)


async def _agent_side(
    agent: Callable[[LineSink], Agent] | Agent, sock: socket.socket, *, unstable: bool
) -> tuple[Agent, AgentSideConnection]:
    """The agent on its end of the pair, on toolwire's transport (its hooks attached)."""
    reader, writer = await asyncio.open_connection(sock=sock, limit=LINE_LIMIT)
    transport = StdioTransport(reader, writer)
    served = agent(transport) if callable(agent) else agent
    transport.on_sent = getattr(served, "on_sent", None)
    transport.on_received = getattr(served, "on_received", None)
    conn = AgentSideConnection(served, transport, listening=False, use_unstable_protocol=unstable)
    return served, conn


async def _stop(
    served: Agent, listening: asyncio.Task[None], agent_conn: AgentSideConnection
) -> None:
    """The agent shut down (its own ``shutdown`` first, if it has one), then its loop."""
    shutdown = getattr(served, "shutdown", None)
    if shutdown is not None:
        await shutdown()
    listening.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await listening
    await agent_conn.close()


__all__ = ["InMemoryConnection", "connect_in_memory"]

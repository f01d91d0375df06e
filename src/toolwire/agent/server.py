"""``toolwire acp``'s server: the official SDK's connection on toolwire's stdio transport.

The transport (``toolwire.agent.protocol.transport``) does the framing and guards the wire; the
SDK (``acp``) routes requests to ``ToolwireAgent``. Loading the SDK's models takes longer
than an editor should wait for ``initialize`` (about 0.4 s of CPU), so ``toolwire acp``
starts through ``toolwire.agent.launch``, which answers ``initialize`` while this module
is still being imported, then hands the connection to ``serve_on``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any, Final

from acp.agent.connection import AgentSideConnection
from acp.schema import InitializeRequest

from toolwire.agent.agent import ToolwireAgent
from toolwire.agent.broken import ConfigBrokenAgent
from toolwire.agent.protocol.transport import (
    LINE_LIMIT,
    FileWriter,
    StdioTransport,
    Writer,
    open_stdio,
)
from toolwire.agent.protocol.v2 import wants_v2
from toolwire.agent.store.worker import StoreWorker
from toolwire.backends import http_client
from toolwire.config import Config

log = logging.getLogger("toolwire.agent")

#: Seconds a running turn may go on after the client closed our input.
EOF_GRACE_S: Final = 3.0


def stop_on_signals() -> None:
    """SIGTERM (what SDK clients send after their own grace) and SIGINT cancel at once."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, main.cancel if main else lambda: None)


async def serve(
    config: Config, *, record: str | None = None, store: StoreWorker | None = None
) -> None:
    """Serve one client on stdio until it closes its end; then stop everything cleanly."""
    stop_on_signals()
    reader, writer = await open_stdio()
    await serve_on(StdioTransport(reader, writer), config, record=record, store=store)


async def serve_on(
    transport: StdioTransport,
    config: Config,
    *,
    record: str | None = None,
    store: StoreWorker | None = None,
    initialized: dict[str, Any] | None = None,
) -> None:
    """Serve the client on ``transport``; ``initialized``: the params of an ``initialize``
    already answered (by ``toolwire.agent.launch``), which the agent still takes in.

    At end of input, requests already read are still answered (a short pause) and a
    running turn gets ``EOF_GRACE_S`` to finish; then every turn is cancelled and every
    command killed: nothing the agent started may outlive it.
    """
    loop = asyncio.get_running_loop()
    client = http_client()  # the backends' connections: closed on the way out, below
    agent = ToolwireAgent(config, store or StoreWorker(), transport, record=record, http=client)
    transport.on_sent, transport.on_received = agent.on_sent, agent.on_received
    if config.acp.v2:
        transport.serve_v2()
    # session/resume and session/close are stable in ACP v1 (schema 1.21), but the SDK
    # (0.12.1, generated from schema 1.19) still routes them only in "unstable" mode.
    conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    log.info("toolwire acp: serving on stdio (default backend %s)", config.default_backend)
    try:
        if initialized is not None:
            await _take_in(agent, transport, initialized)
        await conn.listen()
        await _settle(agent, loop.time() + EOF_GRACE_S)
    finally:
        await agent.shutdown()
        await conn.close()
        await client.aclose()


async def serve_broken(
    transport: StdioTransport, line: str, *, initialized: dict[str, Any] | None = None
) -> None:
    """Serve the client while the configuration cannot be loaded: ``initialize`` as
    usual, every other request answered with ``line`` (``toolwire.agent.broken``)."""
    agent = ConfigBrokenAgent(line)
    if initialized is not None and wants_v2(_initialize(initialized)):
        transport.serve_v2()  # answered in v2 already: requests come in v2's words
        _early(transport, initialized)
    conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    try:
        await conn.listen()
        await asyncio.sleep(0.05)  # the answers to what was read last are written
    finally:
        await conn.close()


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "method": "initialize", "params": params}


def _early(transport: StdioTransport, params: dict[str, Any]) -> dict[str, Any]:
    """The params of an ``initialize`` answered early, in v1 shape; a v2 one makes the
    connection v2 from here on (its answer was v2's)."""
    if transport.v2 is None or not wants_v2(_initialize(params)):
        return params
    translated: dict[str, Any] = transport.v2.answered_early(_initialize(params))["params"]
    return translated


async def _take_in(agent: ToolwireAgent, transport: StdioTransport, params: dict[str, Any]) -> None:
    """What the client said in an ``initialize`` answered early: capabilities, profile."""
    params = _early(transport, params)
    # The raw params too: the SDK's model drops the capabilities it does not know yet
    # (``session.compaction``, ``session.notices``), which the agent reads from them.
    agent.on_received({"jsonrpc": "2.0", "method": "initialize", "params": params})
    request = InitializeRequest.model_validate(params)
    await agent.initialize(
        protocol_version=request.protocol_version,
        client_capabilities=request.client_capabilities,
        client_info=request.client_info,
    )


async def _settle(agent: ToolwireAgent, deadline: float) -> None:
    """After end of input: answer what was read, let a running turn end, up to a point."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(0.05)
    # Polled: "busy" is several things (a turn, a store write, a permission prompt), and
    # this runs once, at the end of input.
    while agent.busy() and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)


__all__ = [
    "EOF_GRACE_S",
    "LINE_LIMIT",
    "FileWriter",
    "StdioTransport",
    "Writer",
    "open_stdio",
    "serve",
    "serve_broken",
    "serve_on",
    "stop_on_signals",
]

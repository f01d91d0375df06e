"""How ``toolwire acp`` starts: ``initialize`` answered before the SDK has loaded.

An editor waits for the ``initialize`` answer before it shows the agent as ready. The
SDK's models (``acp.schema``) take about 0.4 s of CPU to import, and the configuration
(pydantic models) most of a tenth of that, more than the rest of the start together. So
both load in threads from the first instant while this module, which needs neither,
reads the first request: a plain ``initialize`` is answered at once
(``toolwire.agent.handshake``), and the agent takes in what the client said once the SDK
is there. Any other first message is given back to the SDK, which answers it exactly as
it would have. A bad configuration raises ``ConfigError`` from ``run`` as soon as it is
known: before any protocol traffic when the client has not spoken yet, else right after
the ``initialize`` answer, before any session.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolwire.agent.handshake import early_answer
from toolwire.agent.transport import StdioTransport, open_stdio

if TYPE_CHECKING:
    from toolwire.config import Config

_SERVER = "toolwire.agent.server"


async def run(load: Callable[[], Config], *, record: str | None = None) -> None:
    """Serve one client on stdio (what ``toolwire acp`` does), on the configuration
    ``load()`` returns (it may raise ``ConfigError``)."""
    loading = threading.Thread(target=importlib.import_module, args=(_SERVER,), daemon=True)
    loading.start()
    configuring = asyncio.ensure_future(asyncio.to_thread(load))
    reader, writer = await open_stdio()
    transport = StdioTransport(reader, writer)
    first = asyncio.ensure_future(_first_message(transport))
    await asyncio.wait({configuring, first}, return_when=asyncio.FIRST_COMPLETED)
    if configuring.done() and configuring.exception() is not None:
        first.cancel()  # a bad configuration: say so before answering anything
    config = await configuring
    initialized = await first
    await asyncio.to_thread(loading.join)
    server: Any = importlib.import_module(_SERVER)  # loaded by now: the join above
    server.stop_on_signals()
    await server.serve_on(transport, config, record=record, initialized=initialized)


async def _first_message(transport: StdioTransport) -> dict[str, Any] | None:
    """Answer a first plain ``initialize`` and return its params; else give it back."""
    first = await transport.receive()
    if first is None:
        return None
    answer = early_answer(first)
    if answer is None:
        transport.unread(first)
        return None
    await transport.send(answer)
    params: dict[str, Any] = first["params"]
    return params


__all__ = ["run"]

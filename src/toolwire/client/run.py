"""Driving an agent process with the terminal client: initialize, session/new, turns.

One ``run_agent`` call spawns the agent (``acp.spawn_agent_process``), opens one session
in the client's directory and runs a turn per prompt the source yields. Ctrl-C during a
turn sends ``session/cancel`` and answers open permission questions ``cancelled`` (ACP
``prompt-turn`` cancellation); a second Ctrl-C stops waiting for the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import Implementation, InitializeResponse, NewSessionResponse
from acp.utils import serialize_params
from rich.text import Text

from toolwire import __version__
from toolwire.client.client import TerminalClient
from toolwire.client.format import config_line

CLIENT_INFO = Implementation(name="toolwire", title="toolwire terminal client", version=__version__)


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """An agent program, its arguments, and variables added to the SDK's trimmed env.

    ``cwd`` is the process's directory (default: ours, so relative paths in the command
    mean what they meant in the user's shell); the session directory is the client's.
    """

    program: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def __str__(self) -> str:
        return shlex.join([self.program, *self.args])


@dataclass(slots=True)
class RunOutcome:
    """How a run went: each turn's stop reason, or what went wrong."""

    stop_reasons: list[str] = field(default_factory=list)
    error: str | None = None
    session_id: str | None = None

    @property
    def last_stop(self) -> str | None:
        """The stop reason of the last finished turn."""
        return self.stop_reasons[-1] if self.stop_reasons else None


async def run_agent(
    agent: AgentCommand,
    client: TerminalClient,
    prompts: AsyncIterator[str],
    *,
    stderr: IO[Any] | int | None = None,
) -> RunOutcome:
    """Spawn ``agent``, open a session in ``client.cwd`` and run one turn per prompt."""
    outcome = RunOutcome()
    try:
        async with spawn_agent_process(
            client.as_sdk_client(),
            agent.program,
            *agent.args,
            env=dict(agent.env),
            cwd=agent.cwd,
            transport_kwargs={"stderr": stderr},
        ) as (conn, _process):
            outcome.session_id = await _open_session(conn, client)
            async for text in prompts:
                outcome.stop_reasons.append(await _turn(conn, client, outcome.session_id, text))
    except RequestError as e:
        detail = f" ({e.data})" if e.data else ""
        outcome.error = f"the agent answered with an error: {e}{detail}"
    except ConnectionError:
        outcome.error = "the agent closed the connection (did it exit?)"
    except OSError as e:
        outcome.error = f"cannot run {agent.program}: {e.strerror or e}"
    return outcome


async def _open_session(conn: Any, client: TerminalClient) -> str:
    init: InitializeResponse = await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=TerminalClient.capabilities(),
        client_info=CLIENT_INFO,
    )
    client.renderer.note(agent_line(init))
    session: NewSessionResponse = await conn.new_session(cwd=str(client.cwd), mcp_servers=[])
    if session.modes is not None:
        client.view.mode = session.modes.current_mode_id
    options = [serialize_params(o) for o in session.config_options or []]
    client.view.config_options = options
    line = f"session {session.session_id} in {client.cwd}"
    client.renderer.note(Text(line + (f" (mode {client.view.mode})" if client.view.mode else "")))
    if options:
        client.renderer.note(config_line(options))
    return session.session_id


def agent_line(init: InitializeResponse) -> Text:
    """``agent: toolwire 0.1.0, ACP v1`` (and a warning on another protocol version)."""
    info = init.agent_info
    name = f"{info.title or info.name} {info.version}" if info else "(no agentInfo)"
    line = Text(f"agent: {name}, ACP v{init.protocol_version}")
    if init.protocol_version != PROTOCOL_VERSION:
        line.append(f" (this client speaks v{PROTOCOL_VERSION})", style="yellow")
    return line


async def _turn(conn: Any, client: TerminalClient, session_id: str, text: str) -> str:
    client.permissions.reset()
    client.renderer.note(Text(f"> {text}", style="bold"))
    client.renderer.begin_turn()
    prompt = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block(text)]))
    presses = 0
    sending: set[asyncio.Future[None]] = set()  # keeps the cancel task referenced

    def interrupt() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            prompt.cancel()
            return
        client.permissions.cancel_pending()
        client.renderer.note(Text("cancelling the turn (Ctrl-C again to stop waiting)", "yellow"))
        sending.add(asyncio.ensure_future(conn.cancel(session_id=session_id)))

    try:
        with on_interrupt(interrupt):
            response = await prompt
    except asyncio.CancelledError:
        if presses < 2:
            raise  # cancelled from outside, not by a second Ctrl-C
        return "cancelled (the client stopped waiting)"
    finally:
        client.renderer.end_turn()
    return str(response.stop_reason)


@contextlib.contextmanager
def on_interrupt(handler: Callable[[], object]) -> Iterator[None]:
    """Call ``handler`` on Ctrl-C (SIGINT) inside the block, instead of raising."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        # No signal handlers here (Windows, or not the main thread): Ctrl-C raises as usual.
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


__all__ = ["CLIENT_INFO", "AgentCommand", "RunOutcome", "agent_line", "on_interrupt", "run_agent"]

"""The agent's building blocks: sessions made and stopped, and the SDK models it answers.

A session's tools get the ports the client offered in ``initialize``: the editor's file
system for whichever of read/write it advertised, else the local disk; commands run in
client terminals when it advertised ``terminal`` (chosen per call in ``execute``), else
locally. Limits come from ``[limits]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

from acp import PROTOCOL_VERSION
from acp.exceptions import RequestError
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionInfo,
    SessionListCapabilities,
    SessionModeState,
    SessionResumeCapabilities,
)

from toolwire import __version__
from toolwire.agent.outbox import LineSink, Outbox
from toolwire.agent.permissions import MODES
from toolwire.agent.ports import ClientFileSystem
from toolwire.agent.session import Runtime, Session, config_options, mode_state
from toolwire.agent.store import SessionRecord
from toolwire.agent.switch import SWITCH_KEY, rebuild
from toolwire.config import Config
from toolwire.tools import LocalTerminal, ToolContext, ToolLimits

log = logging.getLogger("toolwire.agent")


class SessionFactory:
    """Builds ``Session`` objects for one connection."""

    def __init__(self, runtime: Runtime, sink: LineSink) -> None:
        self._rt = runtime
        self._sink = sink

    def new(self, session_id: str, cwd: str, dirs: tuple[str, ...]) -> Session:
        """A new session on the default backend and mode, stored at once."""
        config = self._rt.config
        tools = self._tools(session_id, cwd, dirs)
        self._rt.store.create(
            cwd, dirs, session_id=session_id, backend=config.default_backend, mode=config.mode
        )
        outbox = Outbox(self._sink, session_id, held=True)
        log.info("session %s: new in %s on %s", session_id, cwd, config.default_backend)
        return Session(session_id, cwd, dirs, config.mode, config.default_backend, outbox, tools)

    def reopen(self, record: SessionRecord, cwd: str, dirs: tuple[str, ...]) -> Session:
        """A stored session, live again with its history, backend and mode."""
        config = self._rt.config
        tools = self._tools(record.id, cwd, dirs)
        backend = config.default_backend
        if record.backend is not None and record.backend in config.backends:
            backend = record.backend
        mode = record.mode if record.mode is not None and record.mode in MODES else config.mode
        outbox = Outbox(self._sink, record.id)
        history = self._rt.store.messages(record.id)
        log.info("session %s: reopened (%d messages)", record.id, len(history))
        session = Session(record.id, cwd, dirs, mode, backend, outbox, tools, history=history)
        session.titled = record.title is not None
        session.noticed = bool(history)  # the demo notice was shown when it began
        rebuild(session, self._rt, record.config.get(SWITCH_KEY))
        return session

    def _tools(self, session_id: str, cwd: str, dirs: tuple[str, ...]) -> ToolContext:
        for path in (cwd, *dirs):
            if not os.path.isabs(path) or not os.path.isdir(path):
                raise RequestError.invalid_params(
                    {"cwd": f"{path} is not an absolute path to an existing directory"}
                )
        fs_caps = self._rt.capabilities.fs
        fs = ClientFileSystem(
            self._rt.client,
            session_id,
            read=bool(fs_caps and fs_caps.read_text_file),
            write=bool(fs_caps and fs_caps.write_text_file),
        )
        limits = self._rt.config.limits
        tool_limits = ToolLimits(
            output_max_bytes=limits.max_tool_output_chars,
            bash_default_timeout_s=limits.command_timeout,
        )
        return ToolContext.create(cwd, dirs, fs=fs, terminal=LocalTerminal(), limits=tool_limits)


def initialize_response() -> InitializeResponse:
    """What ``initialize`` answers: only capabilities that work (research/acp.md 1.2)."""
    sessions = SessionCapabilities(
        list=SessionListCapabilities(),
        resume=SessionResumeCapabilities(),
        close=SessionCloseCapabilities(),
        additional_directories=SessionAdditionalDirectoriesCapabilities(),
    )
    return InitializeResponse(
        protocol_version=PROTOCOL_VERSION,  # v1: the only stable version to agree on
        agent_capabilities=AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            mcp_capabilities=McpCapabilities(http=False, sse=False),
            session_capabilities=sessions,
        ),
        agent_info=Implementation(name="toolwire", title="toolwire", version=__version__),
        auth_methods=[],
    )


def session_infos(records: list[SessionRecord]) -> list[SessionInfo]:
    """Stored sessions as ``session/list`` entries."""
    return [
        SessionInfo(
            session_id=r.id,
            cwd=r.cwd,
            title=r.title,
            updated_at=r.updated_at_iso,
            additional_directories=list(r.additional_dirs) or None,
        )
        for r in records
    ]


def ignore_mcp(servers: list[Any] | None) -> None:
    """MCP servers are not advertised; a client that sends some anyway is logged."""
    if servers:
        log.warning("MCP servers are not supported yet; ignoring %d", len(servers))


async def stop_session(session: Session, *, cancel: bool) -> None:
    """End a session's turn (as a user cancel, or not) and its background commands."""
    turn = session.turn
    if turn is not None:
        session.cancelling = cancel
        turn.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await turn
    with contextlib.suppress(Exception):
        await session.tools.terminal.aclose()


def options_model(
    session: Session, config: Config
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The config options as SDK models (for responses)."""
    options = config_options(session, config)
    return [SessionConfigOptionSelect.model_validate(o) for o in options]


def state_model(session: Session) -> SessionModeState:
    """The mode state as an SDK model (for responses)."""
    return SessionModeState.model_validate(mode_state(session))


__all__ = [
    "SessionFactory",
    "ignore_mcp",
    "initialize_response",
    "options_model",
    "session_infos",
    "state_model",
    "stop_session",
]

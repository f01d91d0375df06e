"""``ToolwireAgent``: the ACP v1 agent behind ``toolwire acp`` (official SDK ``acp.Agent``).

The SDK routes each JSON-RPC request to a method here, validated into its models, each
in a task of its own (so ``session/cancel`` is heard while a prompt runs). Sessions are
``Session`` objects in memory and rows in the ``SessionDatabase``; a prompt turn is a
``loop.Turn`` run as a task, so that ``cancel`` can stop it without cancelling the SDK's
request handler (which must still answer the prompt, once, with ``cancelled``).

Protocol rules kept here (DESIGN.md "ACP rules that bite", research/acp.md 1, 6, 7):

* ``initialize`` advertises only what works: ``loadSession``; ``session/list``,
  ``resume``, ``close`` and ``additionalDirectories``; embedded context in prompts (no
  images, no audio, no MCP servers);
* a new session's outbox is held until the ``session/new`` response is written (the
  transport's ``on_sent`` opens it); its first update, the config options, follows;
* ``session/load`` replays the stored transcript before answering;
* the model is a ``category: "model"`` config option; ``set_config_option`` answers
  with the full set and also sends a ``config_option_update``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import httpx2
from acp.exceptions import RequestError
from acp.interfaces import Client
from acp.schema import (
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from toolwire.agent.outbox import LineSink
from toolwire.agent.permissions import MODES
from toolwire.agent.runtime import (
    SessionFactory,
    ignore_mcp,
    initialize_response,
    options_model,
    session_infos,
    state_model,
    stop_session,
)
from toolwire.agent.session import Runtime, Session, config_options
from toolwire.agent.store import SessionDatabase
from toolwire.agent.turn import Turn
from toolwire.config import Config
from toolwire.updates.profiles import profile_for_client

log = logging.getLogger("toolwire.agent")
PAGE_SIZE = 50


class ToolwireAgent:
    """The agent. Give it the transport it writes to; the SDK calls ``on_connect``."""

    def __init__(
        self,
        config: Config,
        store: SessionDatabase,
        sink: LineSink,
        *,
        record: str | None = None,
        http: httpx2.AsyncClient | None = None,
    ) -> None:
        self._config = config
        self._http = http
        self._store = store
        self._sink = sink
        self._record = record
        self._sessions: dict[str, Session] = {}
        self._runtime: Runtime | None = None

    def on_connect(self, conn: Client) -> None:
        """The SDK hands over the client connection (before any message)."""
        self._runtime = Runtime(
            self._config, self._store, conn, record=self._record, http=self._http
        )

    def on_sent(self, message: dict[str, Any]) -> None:
        """Transport hook: a ``session/new`` response is written, the session may speak."""
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            session = self._sessions.get(result["sessionId"])
            if session is not None:
                session.outbox.open()

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Capabilities both ways; the client profile from ``clientInfo`` or the config."""
        runtime = self._rt()
        runtime.capabilities = client_capabilities or ClientCapabilities()
        info = client_info.model_dump() if client_info is not None else None
        runtime.profile = profile_for_client(info, self._config.profile)
        log.info("client %s, profile %s", info and info.get("name"), runtime.profile)
        return initialize_response()

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session; nothing is sent for it before this response (outbox held)."""
        ignore_mcp(mcp_servers)
        dirs = tuple(additional_directories or ())
        session_id = str(uuid.uuid4())
        session = self._factory().new(session_id, cwd, dirs)
        self._sessions[session_id] = session
        session.outbox.update(self._option_update(session))
        return NewSessionResponse(
            session_id=session_id,
            modes=state_model(session),
            config_options=options_model(session, self._config),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Reopen a stored session, replaying its transcript before the answer."""
        ignore_mcp(mcp_servers)
        session = await self._reopen(session_id, cwd, additional_directories)
        for update in self._store.updates(session_id):
            session.outbox.update(update)
        await session.outbox.drain()
        return LoadSessionResponse(
            modes=state_model(session), config_options=options_model(session, self._config)
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Reopen a stored session without replaying it (the client kept its view)."""
        ignore_mcp(mcp_servers)
        session = await self._reopen(session_id, cwd, additional_directories)
        return ResumeSessionResponse(
            modes=state_model(session), config_options=options_model(session, self._config)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Stored sessions, most recent first, ``PAGE_SIZE`` per page."""
        try:
            offset = int(cursor) if cursor else 0
        except ValueError:
            raise RequestError.invalid_params({"cursor": "not from session/list"}) from None
        records = self._store.list_sessions(cwd=cwd, limit=PAGE_SIZE + 1, offset=offset)
        more = str(offset + PAGE_SIZE) if len(records) > PAGE_SIZE else None
        return ListSessionsResponse(sessions=session_infos(records[:PAGE_SIZE]), next_cursor=more)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's work and free it (it stays stored, loadable later)."""
        session = self._sessions.pop(session_id, None)
        if session is None and self._store.get(session_id) is None:
            raise RequestError.resource_not_found(session_id)
        if session is not None:
            await stop_session(session, cancel=True)
        return CloseSessionResponse()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """``ask`` / ``accept-edits`` / ``read-only``, from the next decision on."""
        self._set_mode(self._live(session_id), mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """``model`` (applies at the next prompt) or ``mode``; answers the full set."""
        session = self._live(session_id)
        if config_id == "mode" and isinstance(value, str):
            self._set_mode(session, value)
        elif config_id == "model" and isinstance(value, str):
            if value not in self._config.backends:
                known = ", ".join(self._config.backends)
                raise RequestError.invalid_params({"value": f"unknown model {value!r}; {known}"})
            session.selected = value
            self._store.update(session_id, backend=value)
            session.outbox.update(self._option_update(session))
        else:
            raise RequestError.invalid_params({"configId": f"no option {config_id!r} of that type"})
        return SetSessionConfigOptionResponse(config_options=options_model(session, self._config))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Run a turn; answered once, when the turn (or its cancellation) is over."""
        session = self._live(session_id)
        if session.turn is not None:
            raise RequestError.invalid_request({"message": "a prompt is already running"})
        session.cancelling = False
        task = asyncio.create_task(Turn(session, self._rt()).run(prompt))
        session.turn = task
        try:
            stop = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this handler itself is being cancelled: the connection is closing
            stop = "cancelled"  # cancelled before the turn took its first step
        finally:
            session.turn = None
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the running turn (once; later cancels do nothing)."""
        session = self._sessions.get(session_id)
        if session is None or session.turn is None or session.cancelling:
            return
        session.cancelling = True
        session.turn.cancel()

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """No authentication methods are advertised (keys live in the environment)."""
        raise RequestError.method_not_found("authenticate")

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """Not advertised (``session/fork`` is unstable in v1)."""
        raise RequestError.method_not_found("session/fork")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored, as the protocol allows."""

    def busy(self) -> bool:
        """True while a prompt turn runs in some session."""
        return any(s.turn is not None for s in self._sessions.values())

    async def shutdown(self) -> None:
        """The client went away: stop every turn and command, close the store."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await stop_session(session, cancel=False)
        self._store.close()

    # -- internals ----------------------------------------------------------------

    def _rt(self) -> Runtime:
        if self._runtime is None:
            raise RuntimeError("the agent is not connected")
        return self._runtime

    def _factory(self) -> SessionFactory:
        return SessionFactory(self._rt(), self._sink)

    def _live(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": f"{session_id} is not open here: session/new or session/load first"}
            )
        return session

    async def _reopen(self, session_id: str, cwd: str, dirs: list[str] | None) -> Session:
        record = self._store.get(session_id)
        if record is None:
            raise RequestError.resource_not_found(session_id)
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await stop_session(old, cancel=True)
        extra = tuple(dirs) if dirs is not None else record.additional_dirs
        session = self._factory().reopen(record, cwd, extra)
        self._sessions[session_id] = session
        return session

    def _set_mode(self, session: Session, mode_id: str) -> None:
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": f"{mode_id!r}; use {', '.join(MODES)}"})
        session.mode = mode_id
        self._store.update(session.id, mode=mode_id)
        session.outbox.update({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
        session.outbox.update(self._option_update(session))

    def _option_update(self, session: Session) -> dict[str, Any]:
        options = config_options(session, self._config)
        return {"sessionUpdate": "config_option_update", "configOptions": options}


__all__ = ["PAGE_SIZE", "ToolwireAgent"]

"""``ToolwireAgent``: the ACP v1 agent behind ``toolwire acp`` (official SDK ``acp.Agent``).

The SDK routes each JSON-RPC request to a method here, validated into its models, each
in a task of its own (so ``session/cancel`` is heard while a prompt runs). Sessions are
``Session`` objects in memory and rows in the ``SessionDatabase``; opening, listing and
ending them is ``lifecycle.Lifecycle``'s, the extension methods ``extensions``'s.
A prompt turn is a ``turn.Turn`` run as a task, its phase the session's ``turn_state.TurnState``, so
that ``cancel`` can stop it without cancelling the SDK's request handler (which must
still answer the prompt, once, with ``cancelled``).

Protocol rules kept here (ACP v1 schema and docs, https://agentclientprotocol.com):

* ``initialize`` advertises only what works: ``loadSession``; ``session/list``,
  ``resume``, ``close``, ``delete`` and ``additionalDirectories``; embedded context in prompts; MCP
  servers over stdio, HTTP and SSE (no images, no audio);
* a new session's outbox is held until the ``session/new`` response is written (the
  transport's ``on_sent``, matched to the request's id, opens it); its first update,
  the config options, follows;
* ``session/load`` replays the stored transcript before answering;
* the model is a ``category: "model"`` config option; ``set_config_option`` answers
  with the full set and also sends a ``config_option_update``.
"""

from __future__ import annotations

import asyncio
import logging
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

from toolwire.agent.auth import authenticate
from toolwire.agent.extensions import Extensions
from toolwire.agent.features import slash
from toolwire.agent.lifecycle import PAGE_SIZE, Lifecycle
from toolwire.agent.protocol.handshake import session_caps, subagents_cap
from toolwire.agent.protocol.outbox import LineSink
from toolwire.agent.protocol.requests import CANCEL_REQUEST, Requests, cancellable
from toolwire.agent.responses import initialize_response, options_model
from toolwire.agent.session.options import THOUGHT_OPTION, backend_of
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.session.turn_state import PromptStopReason
from toolwire.agent.store.worker import StoreWorker
from toolwire.agent.turn.loop import Turn
from toolwire.config import Config
from toolwire.config.choices import THOUGHT_LEVELS
from toolwire.errors import UsageError
from toolwire.updates.profiles import profile_for_client

log = logging.getLogger("toolwire.agent")


class ToolwireAgent:
    """The agent. Give it the transport it writes to; the SDK calls ``on_connect``."""

    def __init__(
        self,
        config: Config,
        store: StoreWorker,
        sink: LineSink,
        *,
        record: str | None = None,
        http: httpx2.AsyncClient | None = None,
    ) -> None:
        self._http = http
        self._store = store
        self._sink = sink
        self._record = record
        self._lifecycle = Lifecycle(config, store, sink, self._rt)
        self._sessions = self._lifecycle.by_id  # the open ones, by id
        self._creating: set[Any] = set()  # ids of session/new requests not yet answered
        self._runtime: Runtime | None = None
        self._requests = Requests()  # what $/cancel_request may cancel
        self._extensions = Extensions(self._prompt)  # steering, providers/*

    @property
    def requests(self) -> Requests:
        """The requests in flight that ``$/cancel_request`` may cancel (``cancellable``)."""
        return self._requests

    def on_connect(self, conn: Client) -> None:
        """The SDK hands over the client connection (before any message)."""
        self._runtime = Runtime(
            self._lifecycle.config, self._store, conn, record=self._record, http=self._http
        )

    def on_received(self, message: dict[str, Any]) -> None:
        """Transport hook: a message from the client, before the SDK routes it."""
        self._requests.received(message)
        method = message.get("method")
        if method in ("session/new", "session/fork") and "id" in message:
            self._creating.add(message["id"])
        elif method == "initialize":
            runtime = self._rt()
            runtime.compaction_updates, runtime.notices = session_caps(message)
            runtime.subagents = subagents_cap(message)
            v2 = getattr(self._sink, "v2", None)  # the transport's, when it serves v2
            runtime.protocol = 2 if v2 is not None and v2.active else 1

    def on_sent(self, message: dict[str, Any]) -> None:
        """Transport hook: a ``session/new`` (or ``fork``) response is written, the
        session may speak."""
        if "method" in message or message.get("id") not in self._creating:
            return
        self._creating.discard(message["id"])
        result = message.get("result")
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        session = self._sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            session.services.outbox.open()

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
        runtime.profile = profile_for_client(info, self._lifecycle.config.profile)
        log.info("client %s, profile %s", info and info.get("name"), runtime.profile)
        caps = runtime.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        return initialize_response(caps)

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new session; nothing is sent for it before this response (outbox held)."""
        return await self._lifecycle.new(cwd, additional_directories, mcp_servers)

    @cancellable
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """Reopen a stored session, replaying its transcript before the answer (a long
        replay is cancellable with ``$/cancel_request``)."""
        return await self._lifecycle.load(cwd, session_id, mcp_servers, additional_directories)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Reopen a stored session without replaying it (the client kept its view)."""
        return await self._lifecycle.resume(session_id, cwd, additional_directories, mcp_servers)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Stored sessions, most recent first, ``PAGE_SIZE`` per page."""
        return await self._lifecycle.page(cwd, cursor)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's work and free it (it stays stored, loadable later)."""
        return await self._lifecycle.close(session_id)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """A mode of ``permissions.MODES``, from the next decision on."""
        await self._set_mode(self._lifecycle.live(session_id), mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self,
        config_id: str,
        session_id: str,
        value: str | bool,  # noqa: FBT001 (the SDK's Agent protocol: a switch's value)
        **kwargs: Any,
    ) -> SetSessionConfigOptionResponse:
        """``model`` (applies at the next prompt), ``mode`` or ``thought_level`` (from the
        next request); answers the full set."""
        session = self._lifecycle.live(session_id)
        if config_id == "mode" and isinstance(value, str):
            await self._set_mode(session, value)
        elif config_id == THOUGHT_OPTION and isinstance(value, str):
            if value not in THOUGHT_LEVELS:
                known = ", ".join(THOUGHT_LEVELS)
                raise RequestError.invalid_params({"value": f"{value!r}; use {known}"})
            session.model.think(value)
            await self._store.call(
                lambda db: db.set_config_value(session_id, THOUGHT_OPTION, value)
            )
            session.services.notifier.options_changed()
        elif config_id == "model" and isinstance(value, str):
            try:
                chosen = backend_of(value, self._lifecycle.config)
                await slash.Slash(session, self._rt()).choose_model(chosen)
            except slash.ChoiceError as exc:
                raise RequestError.invalid_params({"value": str(exc)}) from None
        else:
            raise RequestError.invalid_params({"configId": f"no option {config_id!r} of that type"})
        return SetSessionConfigOptionResponse(
            config_options=options_model(session, self._lifecycle.config)
        )

    @cancellable
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Run a turn; answered once, when the turn (or its cancellation) is over."""
        return await self._prompt(session_id, prompt)

    async def _prompt(self, session_id: str, prompt: list[Any]) -> PromptResponse:
        session = self._lifecycle.live(session_id)
        if session.turn.cancelling and not await session.turn.wait_cancelled():
            return PromptResponse(stop_reason="cancelled")  # a later cancel covers it too
        if self._sessions.get(session_id) is not session:  # closed or reloaded meanwhile
            return PromptResponse(stop_reason="cancelled")
        if session.turn.running:
            # Steering: the message joins the running turn (docs/agent.md, "Steering").
            joined = await session.turn.queue(prompt).joined
            if joined is not None:
                return PromptResponse(stop_reason=joined)
            return await self._prompt(session_id, prompt)  # no turn took it: its own
        if session.turn.phase != "idle":
            raise RequestError.invalid_request({"message": "a prompt is already running"})
        turn = Turn(session, self._rt())
        task = asyncio.create_task(turn.run(prompt))
        session.turn.start(task)
        stop: PromptStopReason = "cancelled"
        try:
            stop = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this handler itself is being cancelled: the connection is closing
            stop = "cancelled"  # cancelled before the turn took its first step
        finally:
            session.turn.finish()
            session.turn.settle(stop)
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the running turn (once; later cancels do nothing)."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.turn.cancel()

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """The ``env`` method: the default backend has its key (``toolwire.agent.auth``)."""
        authenticate(self._lifecycle.config, method_id)
        return AuthenticateResponse()

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """A new session with a copy of the stored one (``agent.fork``); not advertised:
        the v1 schema has no capability for it yet."""
        return await self._lifecycle.fork(session_id, cwd, additional_directories, mcp_servers)

    async def delete_session(self, session_id: str) -> dict[str, Any]:
        """``session/delete``: stop it if live, remove it and its stored history."""
        return await self._lifecycle.delete(session_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``session/delete``, which the transport routes here (the SDK does not), and
        the extension methods (``toolwire.agent.extensions``)."""
        return await self._extensions.route(method, params, self._lifecycle)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """``$/cancel_request`` (routed here by the transport); other extension
        notifications are ignored, as the protocol allows."""
        if method == CANCEL_REQUEST:
            prompting = self._requests.cancel(params)
            if prompting is not None:  # a prompt ends as session/cancel ends it
                await self.cancel(prompting)

    def busy(self) -> bool:
        """True while a prompt turn runs in some session."""
        return any(s.turn.phase != "idle" for s in self._sessions.values())

    async def shutdown(self) -> None:
        """The client went away: stop every turn and command, close the store."""
        await self._lifecycle.stop_all()
        self._extensions.aclose()
        await self._store.aclose()

    # -- internals ----------------------------------------------------------------

    def _rt(self) -> Runtime:
        if self._runtime is None:
            raise UsageError("the agent is not connected: the SDK calls on_connect first")
        return self._runtime

    async def _set_mode(self, session: Session, mode_id: str) -> None:
        try:
            await slash.Slash(session, self._rt()).choose_mode(mode_id)
        except slash.ChoiceError as exc:
            raise RequestError.invalid_params({"modeId": str(exc)}) from None


__all__ = ["PAGE_SIZE", "ToolwireAgent"]

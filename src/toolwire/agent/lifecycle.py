"""``Lifecycle``: a connection's open sessions, from ``session/new`` to ``session/close``.

``ToolwireAgent`` answers ``session/new``, ``load``, ``resume``, ``fork``, ``list``
(``page``), ``close`` and ``delete`` here. Open sessions are ``Session`` objects in
``by_id``; stored ones are rows in the ``SessionDatabase``, reached through the store's
own thread (SQLite never blocks the loop). Reopening a session that is open stops the old one
first, so one id is never live twice.

* a new (or forked) session's outbox is held until its response is written (the
  agent's ``on_sent`` opens it); its first update, the config options, follows;
* ``load`` replays the stored transcript before answering, ``resume`` does not (the
  client kept its view);
* every opened session is then told its commands (``available_commands_update``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from acp.exceptions import RequestError
from acp.schema import (
    CloseSessionResponse,
    ForkSessionResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
)

from toolwire.agent.factory import SessionFactory
from toolwire.agent.features import checkpointing
from toolwire.agent.features.commands import commands_update, custom_commands
from toolwire.agent.features.fork import copy_session
from toolwire.agent.protocol.outbox import LineSink
from toolwire.agent.responses import options_model, session_infos, state_model
from toolwire.agent.session import mcp_calls
from toolwire.agent.session.state import Runtime, Session
from toolwire.agent.store.database import SessionDatabase
from toolwire.agent.store.transcript import replayed
from toolwire.agent.store.worker import StoreWorker
from toolwire.agent.turn.children import Children
from toolwire.config import Config
from toolwire.updates.builders import CommandsUpdate

REPLAY_BATCH = 100
"""Replayed updates written between two chances for the client's cancel to be heard
(a large session replays for seconds; it is written without a pause otherwise)."""

log = logging.getLogger("toolwire.agent")
PAGE_SIZE = 50
_CURSOR = re.compile(r"[0-9]{1,18}")
_T = TypeVar("_T")


class Lifecycle:
    """Open, reopen, list and end one connection's sessions (module doc)."""

    def __init__(
        self,
        config: Config,
        store: StoreWorker,
        sink: LineSink,
        runtime: Callable[[], Runtime],
    ) -> None:
        self.config = config  # the connection's: providers/* replace it
        self.by_id: dict[str, Session] = {}
        self.runtime = runtime  # the Runtime, once the SDK has connected
        self._store = store
        self._sink = sink

    async def new(
        self, cwd: str, additional_directories: list[str] | None, mcp_servers: list[Any] | None
    ) -> NewSessionResponse:
        """A new session; nothing is sent for it before this response (outbox held)."""
        dirs = tuple(additional_directories or ())
        session_id = str(uuid.uuid4())
        session = await self._factory().new(session_id, cwd, dirs)
        self.by_id[session_id] = session
        mcp_calls.start(session, self.runtime(), list(mcp_servers or ()))
        checkpointing.warm(self.config, session_id, (cwd, *dirs))
        session.services.notifier.options_changed()
        session.services.outbox.update(_commands(session))
        return NewSessionResponse(
            session_id=session_id,
            modes=state_model(session),
            config_options=options_model(session, self.config),
        )

    async def load(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None,
        additional_directories: list[str] | None,
    ) -> LoadSessionResponse:
        """Reopen a stored session, its transcript replayed before the answer."""
        session = await self._reopen(session_id, cwd, additional_directories, mcp_servers)
        compaction = self.runtime().compaction_updates
        stored = await self._store_call(lambda db: db.updates(session_id))
        for n, update in enumerate(stored, 1):
            session.services.outbox.update(replayed(update, compaction=compaction))
            if n % REPLAY_BATCH == 0:  # a $/cancel_request is heard between batches
                await session.services.outbox.drain()
                await asyncio.sleep(0)
        await Children.replay(session, self.runtime())
        session.services.outbox.update(_commands(session))
        await session.services.outbox.drain()
        return LoadSessionResponse(
            modes=state_model(session), config_options=options_model(session, self.config)
        )

    async def resume(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[Any] | None,
    ) -> ResumeSessionResponse:
        """Reopen a stored session without replaying it."""
        session = await self._reopen(session_id, cwd, additional_directories, mcp_servers)
        session.services.outbox.update(_commands(session))
        return ResumeSessionResponse(
            modes=state_model(session), config_options=options_model(session, self.config)
        )

    async def page(self, cwd: str | None, cursor: str | None) -> ListSessionsResponse:
        """Stored sessions, most recent first, ``PAGE_SIZE`` per page."""
        # Our cursors are offsets in ASCII digits; anything else (a sign, "1_0", an
        # offset past SQLite's 64-bit integers) is the client's error, not ours.
        if cursor and not _CURSOR.fullmatch(cursor):
            raise RequestError.invalid_params({"cursor": "not from session/list"})
        offset = int(cursor) if cursor else 0
        records = await self._store_call(
            lambda db: db.list_sessions(cwd=cwd, limit=PAGE_SIZE + 1, offset=offset)
        )
        more = str(offset + PAGE_SIZE) if len(records) > PAGE_SIZE else None
        return ListSessionsResponse(sessions=session_infos(records[:PAGE_SIZE]), next_cursor=more)

    async def close(self, session_id: str) -> CloseSessionResponse:
        """Stop the session's work and free it (it stays stored, loadable later)."""
        session = self.by_id.pop(session_id, None)
        if session is None and await self._store_call(lambda db: db.get(session_id)) is None:
            raise RequestError.resource_not_found(session_id)
        if session is not None:
            await _stop(session, cancel=True)
        return CloseSessionResponse()

    async def fork(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None,
        mcp_servers: list[Any] | None,
    ) -> ForkSessionResponse:
        """A new session with a copy of the stored one (``features.fork``), held as a
        new one is."""
        new_id = str(uuid.uuid4())
        copied = await self._store_call(lambda db: copy_session(db, session_id, new_id, cwd))
        if copied is None:
            raise RequestError.resource_not_found(session_id)
        await checkpointing.fork(session_id, new_id)
        session = await self._reopen(new_id, cwd, additional_directories, mcp_servers, held=True)
        session.services.outbox.update(commands_update())
        return ForkSessionResponse(
            session_id=new_id,
            modes=state_model(session),
            config_options=options_model(session, self.config),
        )

    async def delete(self, session_id: str) -> dict[str, Any]:
        """Stop it if live, remove it and its stored history (and checkpoints)."""
        session = self.by_id.pop(session_id, None)
        if session is not None:
            await _stop(session, cancel=True)
        if not await self._store_call(lambda db: db.delete(session_id)) and session is None:
            raise RequestError.resource_not_found(session_id)
        await checkpointing.delete(session_id)
        return {}

    def live(self, session_id: str) -> Session:
        """The open session ``session_id``, or the client's error."""
        session = self.by_id.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": f"{session_id} is not open here: session/new or session/load first"}
            )
        return session

    def live_for(self, params: dict[str, Any]) -> Session:
        """The open session named by an extension method's ``sessionId``."""
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise RequestError.invalid_params({"sessionId": "a session id is required"})
        return self.live(session_id)

    async def stop_all(self) -> None:
        """The client went away: stop every session's turn and commands."""
        sessions = list(self.by_id.values())
        self.by_id.clear()
        for each in sessions:
            await _stop(each, cancel=False)

    # -- internals ----------------------------------------------------------------

    async def _store_call(self, work: Callable[[SessionDatabase], _T]) -> _T:
        """``work(store)`` off the event loop, in order with every other store call."""
        return await self._store.call(work)

    def _factory(self) -> SessionFactory:
        return SessionFactory(self.runtime(), self._sink)

    async def _reopen(
        self,
        session_id: str,
        cwd: str,
        dirs: list[str] | None,
        servers: list[Any] | None,
        *,
        held: bool = False,
    ) -> Session:
        record = await self._store_call(lambda db: db.get(session_id))
        if record is None:
            raise RequestError.resource_not_found(session_id)
        old = self.by_id.pop(session_id, None)
        if old is not None:
            await _stop(old, cancel=True)
        extra = tuple(dirs) if dirs is not None else record.additional_dirs
        session = await self._factory().reopen(record, cwd, extra, held=held)
        self.by_id[session_id] = session
        mcp_calls.start(session, self.runtime(), list(servers or ()))
        checkpointing.warm(self.config, session_id, (cwd, *extra))
        return session


def _commands(session: Session) -> CommandsUpdate:
    """The session's ``available_commands_update``: built-ins and its custom commands."""
    return commands_update(custom_commands(session.who.cwd))


async def _stop(session: Session, *, cancel: bool) -> None:
    """End a session's turn (as a user cancel, or not) and its background commands."""
    await session.turn.stop(cancel=cancel)
    try:
        await session.services.tools.terminal.aclose()
    except Exception:  # a command that will not die must not keep the session open
        log.exception("session %s: closing its commands failed", session.id)
    try:
        await mcp_calls.stop(session)
    except Exception:  # a server that will not stop must not keep the session open
        log.exception("session %s: stopping its MCP servers failed", session.id)


__all__ = ["PAGE_SIZE", "Lifecycle"]

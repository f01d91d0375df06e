"""Making a connection's sessions: new ones, and stored ones live again.

A session's tools get the ports the client offered in ``initialize``: the editor's file
system for whichever of read/write it advertised, else the local disk; commands run in
client terminals when it advertised ``terminal`` (chosen per call in ``execute``), else
locally. Limits come from ``[limits]``; ``WebFetch`` goes through one ``Fetcher`` per
process (``[tools.web]``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from acp.exceptions import RequestError

from toolwire.agent.features.compaction import meter
from toolwire.agent.features.switch import ACTIVE_KEY, Switcher
from toolwire.agent.protocol.outbox import LineSink, Outbox
from toolwire.agent.protocol.ports import ClientFileSystem
from toolwire.agent.session.notify import Notifier
from toolwire.agent.session.options import THOUGHT_OPTION
from toolwire.agent.session.state import (
    ModelChoice,
    Notices,
    Permissions,
    Runtime,
    Session,
    SessionIdentity,
    SessionServices,
)
from toolwire.agent.store.database import SessionRecord
from toolwire.agent.turn.prompt import TITLED
from toolwire.config.choices import THOUGHT_LEVELS
from toolwire.context.meter import RATIO_BAND
from toolwire.conversation import Conversation, ConversationRecord
from toolwire.errors import UsageError
from toolwire.imaging import fitted_messages
from toolwire.sandbox import INSTALL, LANDLOCK_ONLY, Sandbox, probe
from toolwire.tools import LocalTerminal, ToolContext, ToolLimits
from toolwire.tools.terminal import hidden_variables
from toolwire.web import Fetcher, Searcher, SearchSettings, WebSettings

log = logging.getLogger("toolwire.agent")


class SessionFactory:
    """Builds ``Session`` objects for one connection."""

    def __init__(self, runtime: Runtime, sink: LineSink) -> None:
        self._rt = runtime
        self._sink = sink
        # One fetcher for every session: its page cache is the process's (docs/agent.md).
        self._web = Fetcher(WebSettings.from_config(runtime.config.tools.web))
        searching = SearchSettings.from_config(runtime.config.tools.web)
        # Its own client: the backends' may be bound to a provider (a test's transport).
        self._search = None if searching is None else Searcher(searching)

    async def new(self, session_id: str, cwd: str, dirs: tuple[str, ...]) -> Session:
        """A new session on the default backend and mode, stored at once."""
        config = self._rt.config
        tools = self._tools(session_id, cwd, dirs)
        backend, mode = config.default_backend, config.mode
        active = {ACTIVE_KEY: backend}
        await self._rt.store.call(
            lambda db: db.create(
                cwd, dirs, session_id=session_id, backend=backend, mode=mode, config=active
            )
        )
        outbox = Outbox(self._sink, session_id, held=True)
        log.info("session %s: new in %s on %s", session_id, cwd, backend)
        session = Session(
            SessionIdentity(session_id, cwd, dirs),
            SessionServices(outbox, tools),
            ModelChoice(backend),
            Permissions(mode),
        )
        session.services.bind(Notifier(session, self._rt))
        self._sandbox_notice(session)
        return session

    async def reopen(
        self, record: SessionRecord, cwd: str, dirs: tuple[str, ...], *, held: bool = False
    ) -> Session:
        """A stored session, live again with its history, backend and mode.

        ``record.backend`` is the backend the user chose; ``ACTIVE_KEY`` the one that
        answered last. When they differ the switch is still to come, and the next prompt
        makes it (in this process or any other). A backend no longer configured is
        replaced by the default, without a handoff, as before there was a switch.
        """
        tools = self._tools(record.id, cwd, dirs)
        chosen, active = self._backends(record)
        mode = record.mode or self._rt.config.mode
        outbox = Outbox(self._sink, record.id, held=held)  # held: a fork, until answered
        sid = record.id
        # Images are fitted as they enter a session; one stored by an older version may be
        # anything, and a provider would refuse every request of the session for it.
        history = await self._rt.store.call(lambda db: fitted_messages(db.messages(sid)))
        used = await self._rt.store.call(lambda db: db.call_ids(sid))
        log.info("session %s: reopened (%d messages)", record.id, len(history))
        stored = _stored(record)
        conversation = Conversation.restore(stored, history, active)
        told = Notices([TITLED] if record.title is not None else [])
        session = Session(
            SessionIdentity(sid, cwd, dirs),
            SessionServices(outbox, tools, call_ids=used, told=told),
            ModelChoice(active, pending=chosen),
            Permissions(mode),
            conversation,
        )
        session.services.bind(Notifier(session, self._rt))
        self._restore(session, record, stored)
        self._sandbox_notice(session)
        return session

    def _backends(self, record: SessionRecord) -> tuple[str, str]:
        """The backend the user chose and the one that answers; a backend no longer
        configured is the default."""
        config = self._rt.config
        chosen = config.default_backend
        if record.backend is not None and record.backend in config.backends:
            chosen = record.backend
        active = record.config.get(ACTIVE_KEY)
        if not isinstance(active, str) or active not in config.backends:
            active = chosen  # a session stored before ACTIVE_KEY, or its backend is gone
        return chosen, active

    def _restore(self, session: Session, record: SessionRecord, stored: ConversationRecord) -> None:
        """The rest of the stored session: its options, its switch, the meter's correction."""
        thought = record.config.get(THOUGHT_OPTION)
        session.model.think(thought if thought in THOUGHT_LEVELS else None)
        if stored.legacy_switch is not None:  # stored by a version that kept no block
            Switcher(session, self._rt).rebuild(stored.legacy_switch)
        # The estimate's correction, learned on the backend that answers (a switch not
        # yet answered starts afresh, as it does in the process that made it).
        ratio = stored.ratio
        if ratio is not None and stored.metered in (None, session.model.active) and _in_band(ratio):
            meter(session, self._rt.config).ratio = ratio

    def _sandbox_notice(self, session: Session) -> None:
        """One line when the sandbox is on in the configuration but cannot run here, or
        runs under Landlock alone (what it confines, and what not)."""
        if self._rt.config.tools.sandbox.mode == "off":
            return
        found = probe()
        if found.mechanism == "landlock":
            session.services.notifier.notice(LANDLOCK_ONLY)
        if found.mechanism is None:
            log.warning("session %s: commands run without a sandbox: %s", session.id, found.reason)
            session.services.notifier.notice(
                f"Commands run without a sandbox: {found.reason or INSTALL}."
            )

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
        config = self._rt.config
        tool_limits = ToolLimits.from_config(config.limits)
        # Commands never see a backend's key (docs/agent.md, "Commands and keys").
        keys = (b.api_key_env for b in config.backends.values() if b.api_key_env)
        settings = config.tools.sandbox
        mechanism = probe().mechanism if settings.mode != "off" else None
        # Commands run in the sandbox where it can run (docs/sandbox.md); else as before.
        sandbox = (
            None
            if mechanism is None
            else Sandbox(settings, tuple(map(Path, (cwd, *dirs))), mechanism)
        )
        hidden = hidden_variables(keys, config.tools.env_allow)
        terminal = LocalTerminal(hidden=hidden, sandbox=sandbox)
        return ToolContext.create(
            cwd,
            dirs,
            fs=fs,
            terminal=terminal,
            limits=tool_limits,
            web=self._web,
            search=self._search,
        )


def _stored(record: SessionRecord) -> ConversationRecord:
    """The session's stored conversation record; an empty one when it is not ours to read
    (the raw history is sent then)."""
    try:
        return ConversationRecord.from_config(record.config)
    except UsageError as exc:
        log.warning("session %s: stored conversation not used: %s", record.id, exc)
        return ConversationRecord()


def _in_band(ratio: float) -> bool:
    return RATIO_BAND[0] <= ratio <= RATIO_BAND[1]


__all__ = ["SessionFactory"]

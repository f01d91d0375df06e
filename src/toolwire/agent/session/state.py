"""One ACP session's state, and the pieces of the protocol that describe it.

A ``Session`` lives in memory while the client uses it (``session/new``, ``load``,
``resume``) and on disk in the ``SessionDatabase`` (history, transcript, backend, mode), so
``session/load`` and ``session/list`` work after a restart. ``Runtime`` is what every
session of one connection shares: the configuration, the store (on its worker thread),
the client handle and what the client said it can do in ``initialize``.

Only the dataclasses live here: the config options' wire form is in
``agent.session.options``, the system prompt in ``agent.session.system_prompt``, the
prompt's blocks are read by the turn (``agent.turn.prompt``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import httpx2
from acp.interfaces import Client
from acp.schema import ClientCapabilities, PermissionOption

from toolwire.agent.protocol.outbox import Outbox
from toolwire.agent.session.instructions import Instructions
from toolwire.agent.session.turn_state import TurnState
from toolwire.agent.store.worker import StoreWorker
from toolwire.backends import TappableBackend
from toolwire.config import Config
from toolwire.config.choices import Mode, Profile, ThoughtLevel
from toolwire.conversation import Conversation
from toolwire.handoff import MemorySummaryCache
from toolwire.history import Message, ToolCallPart
from toolwire.hooks import HookState
from toolwire.tools import ToolContext
from toolwire.updates.wire import JsonObject

if TYPE_CHECKING:
    # The hub brings in the MCP SDK, imported only once a session runs a server.
    from toolwire.mcp.hub import McpHub


@dataclass(slots=True)
class Runtime:
    """What the sessions of one connection share."""

    config: Config
    store: StoreWorker
    client: Client
    capabilities: ClientCapabilities = field(default_factory=ClientCapabilities)
    profile: Profile = "minimal"
    record: str | None = None
    summaries: MemorySummaryCache = field(default_factory=MemorySummaryCache)
    http: httpx2.AsyncClient | None = None  # backends send with it; None: their own
    compaction_updates: bool = False
    """The client advertised ``session.compaction`` (read from the raw ``initialize``:
    the SDK's capability model drops what it does not know)."""
    notices: bool = False
    """The client advertised ``session.notices``."""
    protocol: int = 1
    """The ACP version agreed in ``initialize`` (2: ``toolwire.agent.protocol.v2``)."""
    subagents: bool = False
    """The client advertised ``subagents`` (unstable): children show as sessions of
    their own (``subagent_update``), not as a digest on the parent's ``Task`` call."""


@dataclass(frozen=True, slots=True)
class SessionIdentity:
    """Who the session is; fixed for its life.

    ``parent`` is set on a subagent: the session that started it (``turn.children``);
    its permission requests and client terminals go to the parent's ``sessionId``.
    ``label``: a subagent's name for the user (its type and description).
    ``tool_names``: the built-in tools the model is offered; None: all of them.
    """

    id: str
    cwd: str
    additional_dirs: tuple[str, ...] = ()
    parent: Session | None = None
    label: str = ""
    tool_names: tuple[str, ...] | None = None


class Notices:
    """What the session told its user once (keyed lines and flags): kept with the
    session, so it goes when the session goes."""

    __slots__ = ("_told",)

    def __init__(self, told: Iterable[str] = ()) -> None:
        self._told = set(told)

    def told(self, key: str) -> bool:
        """``key`` was told already."""
        return key in self._told

    def first(self, key: str) -> bool:
        """True the first time ``key`` is asked for (it is then told), False after."""
        if key in self._told:
            return False
        self._told.add(key)
        return True


class Notifying(Protocol):
    """How the session tells its user something and asks them
    (``agent.session.notify.Notifier``, bound when the session is made)."""

    def notice(self, text: str) -> None: ...

    def options_changed(self) -> None: ...

    def mode_changed(self) -> None: ...

    async def ask(
        self, tool_call: JsonObject, options: Sequence[PermissionOption]
    ) -> str | None: ...


@dataclass(slots=True, eq=False)
class SessionServices:
    """What the session works with, made when it opens and held: its outbox, the
    tools' context, the project's instruction files (``instructions``: refreshed
    before each prompt), its hooks' memory, its MCP servers and the tool-call ids
    already used, what it told the user once (``told``), and how it tells and asks
    them (``notifier``: it needs the session, so it is bound once the session is made)."""

    outbox: Outbox
    tools: ToolContext
    instructions: Instructions = field(default_factory=Instructions)
    hook_state: HookState = field(default_factory=HookState)
    call_ids: set[str] = field(default_factory=set)
    told: Notices = field(default_factory=Notices)
    _mcp: McpHub | None = None
    _mcp_start: asyncio.Task[None] | None = None
    _notifier: Notifying | None = None

    @property
    def notifier(self) -> Notifying:
        """How the session tells and asks its user (``bind``)."""
        if self._notifier is None:
            raise RuntimeError("the session has no notifier: sessions are made by the factory")
        return self._notifier

    def bind(self, notifier: Notifying) -> None:
        """The session's notifier, once the session it notifies for exists."""
        self._notifier = notifier

    @property
    def mcp(self) -> McpHub | None:
        """The session's MCP servers (``agent.session.mcp_calls``), None when none."""
        return self._mcp

    @property
    def mcp_start(self) -> asyncio.Task[None] | None:
        """The task starting them, while it runs or until stopped."""
        return self._mcp_start

    def mcp_started(self, hub: McpHub | None, start: asyncio.Task[None] | None) -> None:
        """The session's MCP servers are ``hub``, started by ``start`` (None: none)."""
        self._mcp, self._mcp_start = hub, start


@dataclass(slots=True, eq=False)
class ModelChoice:
    """Who answers: ``active`` names the backend in use and ``backend`` is that
    backend (made at its first request); ``pending`` names the one the user chose,
    which applies at the next prompt. ``rerouted``: the active backend was pointed
    elsewhere (``providers/set``), so the next prompt switches to it with the handoff.
    ``thought``: the ``thought_level`` the user chose; None: the backend's default."""

    active: str
    pending: str = ""
    rerouted: bool = False
    thought: ThoughtLevel | None = None
    backend: TappableBackend | None = None

    def __post_init__(self) -> None:
        self.pending = self.pending or self.active

    def choose(self, name: str) -> None:
        """The user chose ``name``: it answers from the next prompt."""
        self.pending = name

    def reroute(self) -> None:
        """The active backend now points elsewhere: switch to it at the next prompt."""
        self.rerouted = True

    def think(self, level: ThoughtLevel | None) -> None:
        """The user's thinking level (None: the backend's default)."""
        self.thought = level

    def answering(self, backend: TappableBackend) -> None:
        """``backend`` (made for ``active``) answers from now on."""
        self.backend = backend

    def switched(self, to: str) -> None:
        """``to`` is the active backend now; it is made at its first request."""
        self.active, self.backend, self.rerouted = to, None, False


@dataclass(slots=True, eq=False)
class Permissions:
    """What may run without asking: the mode, the tools the user chose to always
    allow or always reject, whether commands run outside the sandbox (the user's
    choice), and why the client refused a terminal (``terminal/create``: sandboxed
    commands then run in the agent's own process, as without the capability)."""

    mode: Mode
    always: set[str] = field(default_factory=set)
    never: set[str] = field(default_factory=set)
    unsandboxed: bool = False
    terminal_refused: str | None = None

    def set_mode(self, mode: Mode) -> None:
        """The session's mode from now on."""
        self.mode = mode

    def unsandbox(self) -> None:
        """The user chose to run this session's commands outside the sandbox."""
        self.unsandboxed = True

    def refuse_terminal(self, why: str) -> None:
        """The client refused a terminal, for ``why``."""
        self.terminal_refused = why


@dataclass(slots=True, eq=False)
class Session:
    """A live session, one part per lifetime: who it is (``who``, fixed), what it works
    with (``services``, held), what the model sees (``conversation``: the raw history
    since the last ``/clear``, the switch or compaction point, the meter), who answers
    (``model``), what may run (``rules``) and its prompt turn (``turn``). Each part is
    the only writer of its own fields (``tests/test_owners.py``)."""

    who: SessionIdentity
    services: SessionServices
    model: ModelChoice
    rules: Permissions
    conversation: Conversation = field(default_factory=Conversation)
    turn: TurnState = field(default_factory=TurnState)

    def __post_init__(self) -> None:
        self.services.call_ids.update(
            p.id for m in self.history for p in m.parts if isinstance(p, ToolCallPart)
        )

    @property
    def id(self) -> str:
        """The session's id."""
        return self.who.id

    @property
    def wire_id(self) -> str:
        """The ``sessionId`` the client's requests name: a subagent's is its parent's."""
        parent = self.who.parent
        return self.id if parent is None else parent.wire_id

    @property
    def history(self) -> list[Message]:
        """The history since the last clear (the conversation's; append as it goes on)."""
        return self.conversation.history


__all__ = [
    "ModelChoice",
    "Notices",
    "Notifying",
    "Permissions",
    "Runtime",
    "Session",
    "SessionIdentity",
    "SessionServices",
]

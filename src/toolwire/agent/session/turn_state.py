"""A session's prompt turn as a state: ``idle -> running (-> cancelling) -> idle``.

One table (``_MOVES``) says which moves exist; any other is a bug and raises
``TurnStateError``. The agent starts and finishes turns (one at a time per session) and
cancels them on ``session/cancel``; the running turn reads ``cancelling`` to tell a
user's cancel from the connection going away. A prompt that arrives while a cancelled
turn winds down waits for it (``wait_cancelled``) rather than being refused.

Steering is turn state too: a message the user sends while a turn runs is queued here
(``queue``), the running turn takes the queue before each model request (``take``), and
when the turn ends the messages it took are answered with its stop reason (``settle``);
those it never took are handed back to run as turns of their own (the extension method
and the contract: ``toolwire.agent.session.steering``).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from toolwire.errors import UsageError
from toolwire.history import ToolSpec

#: The ``stopReason`` a ``session/prompt`` is answered with (not the provider's reason).
PromptStopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"
]

TurnPhase: TypeAlias = Literal["idle", "running", "cancelling"]
TurnMove: TypeAlias = Literal["start", "cancel", "finish"]

#: (phase, move) -> the next phase. Any other pair is a bug: ``TurnStateError``.
_MOVES: Final[dict[tuple[TurnPhase, TurnMove], TurnPhase]] = {
    ("idle", "start"): "running",
    ("running", "cancel"): "cancelling",
    # A client may answer a pending permission "cancelled" before its session/cancel
    # arrives (the turn then moves itself), and session/close may follow a cancel.
    ("cancelling", "cancel"): "cancelling",
    ("running", "finish"): "idle",
    ("cancelling", "finish"): "idle",
}


class TurnStateError(UsageError):
    """A session's turn was moved in a way its transition table does not allow."""


@dataclass(eq=False)
class Steer:
    """One queued message; ``joined`` resolves to the stop reason of the turn that took
    it, or None when no turn took it."""

    blocks: list[Any]
    joined: asyncio.Future[PromptStopReason | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class TurnState:
    """A session's prompt turn: its phase, while it runs its task, the messages steered
    into it, and the ``Task`` tool it offers."""

    __slots__ = ("_cancels", "_idle", "_steered", "_steering", "_task_tool", "phase", "task")

    def __init__(self) -> None:
        self.phase: TurnPhase = "idle"
        self.task: asyncio.Task[PromptStopReason] | None = None
        self._idle = asyncio.Event()  # set while no turn runs
        self._idle.set()
        self._cancels = 0  # session/cancel notifications heard, to cancel a waiting prompt
        self._steering: list[Steer] = []  # sent while the turn runs, not yet taken
        self._steered: list[Steer] = []  # taken by the running turn, answered at its end
        self._task_tool: ToolSpec | None = None

    @property
    def running(self) -> bool:
        """A turn runs that may still take a message (not one being cancelled)."""
        return self.phase == "running"

    @property
    def task_tool(self) -> ToolSpec | None:
        """``Task`` as offered to the model (set at each turn; never on a subagent)."""
        return self._task_tool

    def offer_task(self, spec: ToolSpec | None) -> None:
        """The turn offers ``spec`` as ``Task`` (None: it offers none)."""
        self._task_tool = spec

    def queue(self, blocks: list[Any]) -> Steer:
        """Queue ``blocks`` for the running turn's next model request."""
        steer = Steer(list(blocks))
        self._steering.append(steer)
        return steer

    def take(self) -> list[Steer]:
        """The queued messages, now part of the running turn."""
        taken, self._steering = self._steering, []
        self._steered += taken
        return taken

    def settle(self, stop: PromptStopReason) -> None:
        """The turn ended with ``stop``: the messages it took are answered with it; those
        it did not take are handed back (None), to run as turns of their own."""
        taken, self._steered = self._steered, []
        left, self._steering = self._steering, []
        for steer in taken:
            if not steer.joined.done():
                steer.joined.set_result(stop)
        for steer in left:
            if not steer.joined.done():
                steer.joined.set_result(None)

    @property
    def cancelling(self) -> bool:
        """True once the user cancelled the running turn."""
        return self.phase == "cancelling"

    def move(self, move: TurnMove) -> TurnPhase:
        """Apply one transition of the table; ``TurnStateError`` if it is not in it."""
        try:
            self.phase = _MOVES[(self.phase, move)]
        except KeyError:
            raise TurnStateError(f"cannot {move} a turn that is {self.phase}") from None
        return self.phase

    def start(self, task: asyncio.Task[PromptStopReason]) -> None:
        """A prompt turn runs as ``task``."""
        self.move("start")
        self.task = task
        self._idle.clear()

    def cancel(self) -> None:
        """``session/cancel``: stop the running turn once; later cancels do nothing to it
        (they cancel a prompt waiting in ``wait_cancelled``)."""
        self._cancels += 1
        if self.phase == "running" and self.task is not None:
            self.move("cancel")
            self.task.cancel()

    def finish(self) -> None:
        """The turn is over (answered, or its handler went away)."""
        self.move("finish")
        self.task = None
        self._idle.set()

    async def wait_cancelled(self) -> bool:
        """Wait for a cancelled turn to end; False when the wait itself was cancelled.

        ACP answers a cancelled prompt ``cancelled`` once its updates are out; a prompt
        sent right after the ``session/cancel`` (before that answer) is the user's next
        message, so it waits for the idle turn and then runs. A ``session/cancel`` heard
        during the wait cancels that prompt too: it covers every prompt sent before it.
        """
        heard = self._cancels
        while self.phase == "cancelling":
            await self._idle.wait()
        return self._cancels == heard

    async def stop(self, *, cancel: bool) -> None:
        """End the turn, as a user cancel or (``cancel=False``) as the connection closing."""
        task = self.task
        if task is None:
            return
        if cancel:
            self.move("cancel")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


__all__ = [
    "PromptStopReason",
    "Steer",
    "TurnMove",
    "TurnPhase",
    "TurnState",
    "TurnStateError",
]

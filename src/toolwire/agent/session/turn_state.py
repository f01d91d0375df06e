"""A session's prompt turn as a state: ``idle -> running (-> cancelling) -> idle``.

One table (``_MOVES``) says which moves exist; any other is a bug and raises
``TurnStateError``. The agent starts and finishes turns (one at a time per session) and
cancels them on ``session/cancel``; the running turn reads ``cancelling`` to tell a
user's cancel from the connection going away. A prompt that arrives while a cancelled
turn winds down waits for it (``wait_cancelled``) rather than being refused.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final, Literal, TypeAlias

from toolwire.errors import UsageError

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


class TurnState:
    """A session's prompt turn: its phase and, while it runs, its task."""

    __slots__ = ("_cancels", "_idle", "phase", "task")

    def __init__(self) -> None:
        self.phase: TurnPhase = "idle"
        self.task: asyncio.Task[PromptStopReason] | None = None
        self._idle = asyncio.Event()  # set while no turn runs
        self._idle.set()
        self._cancels = 0  # session/cancel notifications heard, to cancel a waiting prompt

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


__all__ = ["PromptStopReason", "TurnMove", "TurnPhase", "TurnState", "TurnStateError"]

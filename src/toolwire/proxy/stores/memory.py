"""Session state in this process only (the default store), the most recently used
``MAX_SESSIONS`` sessions: a long-running proxy that sees many sessions must not grow
without bound, and a session idle the longest is the one least likely to come back."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from toolwire.proxy.state import SessionState

_T = TypeVar("_T")
MAX_SESSIONS = 1000  # each up to a few hundred kB (``state.MAX_PRODUCED`` keys)


class MemoryStore:
    """Session state in a dict, as JSON (so a state never aliases a caller's object)."""

    # CPU work under the GIL: a worker thread would not let the loop relay meanwhile,
    # and handing over costs each stream up to a switch interval.
    blocking = False

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self._states: dict[str, str] = {}  # least recently used first
        self._lock = threading.RLock()  # a caller may still plan in worker threads

    def __len__(self) -> int:
        return len(self._states)

    def load(self, session: str) -> SessionState:
        with self._lock:
            text = self._states.pop(session, None)
            if text is not None:
                self._states[session] = text  # used: the newest again
        return SessionState.from_json(text) if text else SessionState()

    def save(self, session: str, state: SessionState) -> None:
        with self._lock:
            self._states.pop(session, None)
            self._states[session] = state.to_json()
            while len(self._states) > self.max_sessions:
                del self._states[next(iter(self._states))]

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        with self._lock:
            state = self.load(session)
            result = change(state)
            self.save(session, state)
            return result


__all__ = ["MAX_SESSIONS", "MemoryStore"]

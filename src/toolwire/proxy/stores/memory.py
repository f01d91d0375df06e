"""Session state in this process only (the default store)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from toolwire.proxy.state import SessionState

_T = TypeVar("_T")


class MemoryStore:
    """Session state in a dict, as JSON (so a state never aliases a caller's object)."""

    # CPU work under the GIL: a worker thread would not let the loop relay meanwhile,
    # and handing over costs each stream up to a switch interval.
    blocking = False

    def __init__(self) -> None:
        self._states: dict[str, str] = {}
        self._lock = threading.Lock()  # a caller may still plan in worker threads

    def load(self, session: str) -> SessionState:
        text = self._states.get(session)
        return SessionState.from_json(text) if text else SessionState()

    def save(self, session: str, state: SessionState) -> None:
        self._states[session] = state.to_json()

    def update(self, session: str, change: Callable[[SessionState], _T]) -> _T:
        with self._lock:
            state = self.load(session)
            result = change(state)
            self.save(session, state)
            return result


__all__ = ["MemoryStore"]

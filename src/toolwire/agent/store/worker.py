"""The session store on a worker thread of its own, so SQLite never blocks the event loop.

Every editor window runs its own ``toolwire acp`` on the same ``sessions.db``. A write
lock another one holds makes a write wait (``busy_timeout``, up to 5 s); on the event
loop that wait would freeze every session's streaming and ``session/cancel`` with it.
Here only the task that needs the store waits; the loop goes on serving.

One dedicated thread rather than ``asyncio.to_thread``'s pool, for two reasons:

* a ``sqlite3`` connection belongs to the thread that opened it (``check_same_thread``)
  and must not be used by two threads at once: the store is opened on this thread and
  only ever used there;
* jobs run one at a time, in the order they were submitted. A turn's writes (prompt,
  steps, the last save) land in order, and a read submitted after a write sees it.

A job is shielded from the cancellation of the task that awaits it: once submitted, a
write lands even if that task is cancelled meanwhile (a turn cancelled mid-save).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from toolwire.agent.store.database import SessionDatabase

_T = TypeVar("_T")


class StoreWorker:
    """A ``SessionDatabase`` opened and used on one worker thread; ``call`` runs work there."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolwire-store")
        try:
            self._store = self._pool.submit(lambda: SessionDatabase(path, clock=clock)).result()
        except BaseException:
            self._pool.shutdown(wait=False)
            raise

    async def call(self, work: Callable[[SessionDatabase], _T]) -> _T:
        """``work(store)`` on the store's thread, after every job submitted before it."""
        loop = asyncio.get_running_loop()
        return await asyncio.shield(loop.run_in_executor(self._pool, work, self._store))

    async def aclose(self) -> None:
        """Close the store once every submitted job is done; the thread ends."""
        await self.call(SessionDatabase.close)
        self._pool.shutdown(wait=False)


__all__ = ["StoreWorker"]

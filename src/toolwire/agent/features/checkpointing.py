"""A session's file checkpoints (``toolwire.checkpoints``) as the agent takes and uses them.

``before-N`` is taken just before prompt N reaches the model, ``after-N`` when its turn
ends (finished, cancelled or failed), on every directory of the session (its cwd and
additional directories); snapshots beyond ``[checkpoints] keep`` prompts are pruned
after each turn. All of it runs off the event loop (``asyncio.to_thread``: git and a walk
of the tree). A failure is logged and never stops a prompt: the prompt's checkpoint is
then missing, and ``/rewind`` says so.

``[checkpoints]`` in the config: ``enabled`` (default true), ``keep`` (prompts kept per
session, default 50), ``max_file_bytes`` (10 MB). Off, or without git, nothing is taken
and ``why_off`` says why. The stores live under ``$XDG_DATA_HOME/toolwire/checkpoints``,
one per session: a fork gets a copy of its source's (``fork``), a delete removes it.

A session's first snapshot reads every file (seconds on a large tree); later ones only
what changed. So ``warm`` takes a ``start`` snapshot as soon as a session opens, in the
background: in a pool of its own (``SNAPSHOT_WORKERS`` daemon threads at the lowest CPU
priority, their git processes too), never in the threads the agent does the rest of its
file work in, so a hundred sessions opened at once never delay a prompt. A prompt whose
session's ``start`` snapshot is still running waits for it rather than paying for it
again; one still queued lets the prompt's ``before-N`` read the files first (and then
costs little: only what changed since).
Every use of a session's store holds that session's lock (``locked``): one git index per
store, and git refuses a second writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from toolwire.checkpoints import (
    DEFAULT_MAX_FILE_BYTES,
    Checkpoints,
    after,
    before,
    default_root,
    unavailable,
)
from toolwire.checkpoints.store import store_dir
from toolwire.config import Config

log = logging.getLogger("toolwire.agent")
START = "start"
"""The snapshot ``warm`` takes when a session opens."""

SNAPSHOT_WORKERS: Final = 1
"""Threads taking ``start`` snapshots (each reads a whole tree: CPU and disk bound)."""

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
_warming: set[asyncio.Task[bool]] = set()  # held until done: the loop keeps weak refs


class _SnapshotPool:
    """Daemon threads at the lowest priority, taking queued work in order (module doc).
    Daemons: work still queued at exit never holds the process up."""

    def __init__(self, workers: int) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._workers = workers
        self._started = 0
        self._guard = threading.Lock()

    async def run(self, work: Callable[[], None]) -> None:
        """``work()`` in the pool; its exception, if any, raised here. Cancelled before it
        begins, it never begins; cancelled once begun, this waits for it to end (as the
        loop's own executor is joined at exit): a session's files are not removed, nor
        the loop closed, under a snapshot still writing them."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        # ``ended`` is never awaited but shielded: a cancel of the awaiting task cancels
        # ``done`` too, which then no longer says whether the work still runs.
        ended: asyncio.Future[None] = loop.create_future()
        state = {"dropped": False, "begun": False}
        guard = threading.Lock()

        def settle(error: BaseException | None) -> None:
            if not ended.done():
                ended.set_result(None)
            if not done.done():
                done.set_result(None) if error is None else done.set_exception(error)

        def job() -> None:
            error: BaseException | None = None
            with guard:  # nobody waits once the loop is closed: never begun then
                state["begun"] = not state["dropped"] and not loop.is_closed()
            try:
                if state["begun"]:
                    work()
            except BaseException as exc:  # handed to the awaiting task
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, error)

        self._spawn()
        self._jobs.put(job)
        try:
            await done
        except asyncio.CancelledError:
            with guard:
                state["dropped"] = True  # not begun yet: never begins
            while state["begun"] and not ended.done():  # a second cancel waits on too
                with contextlib.suppress(BaseException):
                    await asyncio.shield(ended)
            raise

    def _spawn(self) -> None:
        with self._guard:
            if self._started < self._workers:
                self._started += 1
                threading.Thread(target=self._serve, name="toolwire-snapshot", daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: niceness is per thread
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while True:
            self._jobs.get()()


_pool = _SnapshotPool(SNAPSHOT_WORKERS)


def locked(session_id: str) -> threading.Lock:
    """The lock every use of the session's store holds (taken in the worker thread)."""
    with _locks_guard:
        return _locks.setdefault(session_id, threading.Lock())


def why_off(config: Config) -> str | None:
    """Why this agent takes no checkpoints (one line), or None when it does."""
    if not config.checkpoints.enabled:
        return "checkpoints are off ([checkpoints] enabled = false)"
    return unavailable()


def keep(config: Config) -> int:
    """How many prompts' snapshots a session keeps."""
    return config.checkpoints.keep


def root() -> Path:
    """Where the session stores are (read when used: tests move the data directory)."""
    return default_root()


def open_store(
    config: Config, session_id: str, dirs: tuple[str, ...], where: Path | None = None
) -> Checkpoints:
    """The session's store on ``dirs`` (created on first use), under ``where`` (default
    ``root()``). Blocking: off the loop."""
    cap = config.checkpoints.max_file_bytes
    return Checkpoints.open(where or root(), session_id, dirs, max_file_bytes=cap)


def exists(session_id: str) -> bool:
    """Whether the session has a store (checkpoints were taken for it)."""
    return (store_dir(root(), session_id) / "HEAD").exists()


async def take(config: Config, session_id: str, dirs: tuple[str, ...], name: str) -> bool:
    """Take snapshot ``name``, pruning after an ``after-`` one; False when it was not taken."""
    if why_off(config) is not None:
        return False
    warming, where = name == START, root()  # where: read now, not when the job runs

    def work() -> None:
        with locked(session_id):
            store = open_store(config, session_id, dirs, where)
            store.take(name)
            if name.startswith("after-"):
                store.prune(keep(config))

    try:
        await (_pool.run(work) if warming else asyncio.to_thread(work))
    except Exception:  # a checkpoint must never cost the user their prompt
        log.exception("session %s: checkpoint %s failed", session_id, name)
        return False
    return True


def warm(config: Config, session_id: str, dirs: tuple[str, ...]) -> None:
    """Queue the ``start`` snapshot of a session just opened, in the snapshot pool."""
    if why_off(config) is None:
        task = asyncio.get_running_loop().create_task(take(config, session_id, dirs, START))
        _warming.add(task)
        task.add_done_callback(_warming.discard)


async def before_prompt(config: Config, session_id: str, dirs: tuple[str, ...], n: int) -> None:
    """``before-N``: the files as they are just before prompt ``n`` reaches the model."""
    await take(config, session_id, dirs, before(n))


async def after_prompt(config: Config, session_id: str, dirs: tuple[str, ...], n: int) -> None:
    """``after-N``: the files when the turn of prompt ``n`` ends, however it ended."""
    await take(config, session_id, dirs, after(n))


async def fork(source: str, new_id: str) -> None:
    """Give fork ``new_id`` the snapshots of ``source`` (objects hard-linked)."""
    if not exists(source):
        return
    store = Checkpoints(store_dir(root(), source), (), DEFAULT_MAX_FILE_BYTES)
    try:
        await asyncio.to_thread(store.fork, new_id)
    except Exception:  # the fork itself stands; only its rewinds lose the older files
        log.exception("session %s: copying its checkpoints to %s failed", source, new_id)


async def delete(session_id: str) -> None:
    """Remove the session's snapshots (nothing when it has none)."""
    if exists(session_id):
        store = Checkpoints(store_dir(root(), session_id), (), DEFAULT_MAX_FILE_BYTES)
        await asyncio.to_thread(store.delete)


__all__ = [
    "SNAPSHOT_WORKERS",
    "after_prompt",
    "before_prompt",
    "delete",
    "exists",
    "fork",
    "keep",
    "locked",
    "open_store",
    "take",
    "warm",
    "why_off",
]

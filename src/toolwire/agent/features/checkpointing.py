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
background, and a prompt typed meanwhile waits for it rather than paying for it again.
Every use of a session's store holds that session's lock (``locked``): one git index per
store, and git refuses a second writer.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

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

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()
_warming: set[asyncio.Task[bool]] = set()  # held until done: the loop keeps weak refs


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


def open_store(config: Config, session_id: str, dirs: tuple[str, ...]) -> Checkpoints:
    """The session's store on ``dirs`` (created on first use). Blocking: off the loop."""
    cap = config.checkpoints.max_file_bytes
    return Checkpoints.open(root(), session_id, dirs, max_file_bytes=cap)


def exists(session_id: str) -> bool:
    """Whether the session has a store (checkpoints were taken for it)."""
    return (store_dir(root(), session_id) / "HEAD").exists()


async def take(config: Config, session_id: str, dirs: tuple[str, ...], name: str) -> bool:
    """Take snapshot ``name``, pruning after an ``after-`` one; False when it was not taken."""
    if why_off(config) is not None:
        return False

    def work() -> None:
        with locked(session_id):
            store = open_store(config, session_id, dirs)
            store.take(name)
            if name.startswith("after-"):
                store.prune(keep(config))

    try:
        await asyncio.to_thread(work)
    except Exception:  # a checkpoint must never cost the user their prompt
        log.exception("session %s: checkpoint %s failed", session_id, name)
        return False
    return True


def warm(config: Config, session_id: str, dirs: tuple[str, ...]) -> None:
    """Start the ``start`` snapshot of a session just opened, in the background."""
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

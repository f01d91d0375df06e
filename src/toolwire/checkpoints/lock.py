"""One writer at a time on a shadow store, and the locks a killed one leaves behind.

git guards its index and refs with ``*.lock`` files it creates and renames; a process
killed in between (a process-group kill of the agent during a checkpoint) leaves the lock,
and every later git command on that store refuses to run. The store is toolwire's own,
so toolwire may clear such a lock once it knows its holder is gone: every git command on
a store runs while toolwire holds ``toolwire.lock`` there (``flock``, released by the
kernel when its holder dies), and the descriptor is passed to git itself, so the lock
stays held while a git started by a killed agent is still running. A ``*.lock`` file git
complains about while toolwire holds that lock was therefore left by a process that is
dead: it is removed (and logged) and the command run again, once.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

NAME = "toolwire.lock"
WAIT = 60.0
"""Seconds a git command waits for another toolwire process's command on the store."""
_STALE = re.compile(r"Unable to create '([^']+\.lock)': File exists")
log = logging.getLogger("toolwire.checkpoints")


@contextlib.contextmanager
def held(store: Path, wait: float | None = None) -> Iterator[int]:
    """Hold the store's lock (made with the store's directory when missing); the
    descriptor, for the git processes to inherit. ``TimeoutError`` after ``wait``."""
    store.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(store / NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        wait = WAIT if wait is None else wait
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the checkpoint store {store} is busy: another toolwire process "
                        f"has used it for over {wait:.0f} s"
                    ) from None
                time.sleep(0.05)
        yield fd
    finally:
        os.close(fd)  # releases the flock (children that inherited it keep it)


def stale(store: Path, stderr: str) -> Path | None:
    """The lock file of ``store`` that git's ``stderr`` says is in its way, if any;
    only called while ``held``: its holder is dead."""
    found = _STALE.search(stderr)
    if found is None:
        return None
    path = Path(found.group(1))
    if not path.is_absolute():
        path = store / path
    inside = path.resolve().is_relative_to(store.resolve()) and path.name != NAME
    return path if inside else None


def clear(path: Path) -> bool:
    """Remove a stale lock; True when it was there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    log.warning("removed %s: a checkpoint lock left by a process that is gone", path)
    return True


__all__ = ["NAME", "clear", "held", "stale"]

"""Checkpoints of a session's directories, kept outside the user's repository.

``Checkpoints.open(root, session_id, directories)`` opens (or creates) the session's
shadow git store; ``take(name)`` snapshots every directory, ``changed(since, until)``
says which files moved, ``restore(to, keep=...)`` puts them back, and ``fork``,
``delete`` and ``prune`` follow the session's life. ``rules`` holds the pure parts: the
``before-N`` / ``after-N`` names, the conflict rule (a file changed outside a turn is not
overwritten) and retention. ``unavailable()`` says, in one line, why checkpoints are off
on a machine without git. Design and costs: docs/checkpoints.md.
"""

from toolwire.checkpoints.git import CheckpointError, unavailable
from toolwire.checkpoints.model import Changes, RestoreReport, Snapshot
from toolwire.checkpoints.rules import (
    after,
    before,
    conflicts,
    missing,
    outside_windows,
    prompt_of,
    pruned,
    strict_windows,
)
from toolwire.checkpoints.store import DEFAULT_MAX_FILE_BYTES, Checkpoints, default_root

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "Changes",
    "CheckpointError",
    "Checkpoints",
    "RestoreReport",
    "Snapshot",
    "after",
    "before",
    "conflicts",
    "default_root",
    "missing",
    "outside_windows",
    "prompt_of",
    "pruned",
    "strict_windows",
    "unavailable",
]

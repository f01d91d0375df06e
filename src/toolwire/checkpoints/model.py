"""What the checkpoint store hands out: snapshots, the changes between two, a restore's report.

Paths are absolute (a session has several directories; the agent's tools name files
absolutely too); inside the store each is kept relative to its directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A named checkpoint of every directory of the session, as it was at ``taken_at``."""

    name: str
    commit: str
    taken_at: float
    trees: Mapping[Path, str]
    """Each directory and the git tree of its files."""
    skipped: Mapping[Path, str] = field(default_factory=dict)
    """Files (and embedded repositories) left out, and why: never saved, never restored."""


@dataclass(frozen=True, slots=True)
class Changes:
    """How the files went from one snapshot to another (or to the tree now)."""

    modified: frozenset[Path] = frozenset()
    added: frozenset[Path] = frozenset()
    deleted: frozenset[Path] = frozenset()

    def paths(self) -> frozenset[Path]:
        """Every path that changed in any way."""
        return self.modified | self.added | self.deleted

    def __bool__(self) -> bool:
        return bool(self.modified or self.added or self.deleted)


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore did, file by file."""

    restored: tuple[Path, ...] = ()
    """Changed since the snapshot: written back."""
    removed: tuple[Path, ...] = ()
    """Created since the snapshot: deleted."""
    recreated: tuple[Path, ...] = ()
    """Deleted since the snapshot: written again."""
    kept: tuple[Path, ...] = ()
    """Changed since, but asked to be kept (the conflicts): left as they are."""
    skipped: Mapping[Path, str] = field(default_factory=dict)
    """Left alone, and why: over the size cap, or an embedded repository."""
    blocked: Mapping[Path, str] = field(default_factory=dict)
    """Files the restore could not write or remove, and why (a path through a symlink, a
    directory in the way, a read-only or immutable directory or file). When there is any,
    the restore changed nothing: ``restored``, ``removed`` and ``recreated`` are empty."""


__all__ = ["Changes", "RestoreReport", "Snapshot"]

"""A restore of a snapshot, all or nothing.

Planned first (what differs between the snapshot and the files now, less what is kept or
skipped), then checked (``writable.blocker`` for every path: nothing moves when one
cannot be done), then applied: removals first (deepest first), then writes. Should a step
fail all the same (the disk fills, a file changes meanwhile), the steps already done are
undone from the files as they were just before (the scan of now has their blobs), so
the user's files are left as the restore found them and the failure is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toolwire.checkpoints import files
from toolwire.checkpoints.model import RestoreReport
from toolwire.checkpoints.writable import blocker

ABSENT = "000000"
Blobs = Callable[[list[str]], dict[str, bytes]]


@dataclass(frozen=True, slots=True)
class Step:
    """One path of a restore: written back (``mode``/``blob`` of the snapshot) or
    removed (``mode`` absent); ``was_mode``/``was_blob``: the file now, for an undo."""

    directory: Path
    rel: str
    mode: str
    blob: str
    was_mode: str
    was_blob: str

    @property
    def path(self) -> Path:
        return self.directory / self.rel

    @property
    def removal(self) -> bool:
        return self.mode == ABSENT


@dataclass(slots=True)
class Plan:
    """Everything a restore would do, and what it leaves and why."""

    steps: list[Step] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    skipped: dict[Path, str] = field(default_factory=dict)
    done: list[Step] = field(default_factory=list)
    """The steps of the last ``apply`` (their files' stat data is stale in the index)."""

    def blocked(self) -> dict[Path, str]:
        """The paths that cannot be done, and why (checked before anything moves)."""
        removing: dict[Path, set[str]] = {}
        for step in self.steps:
            if step.removal:
                removing.setdefault(step.directory, set()).add(step.rel)
        found = {}
        for step in self.steps:
            gone = removing.get(step.directory, set())
            why = blocker(step.directory, step.rel, write=not step.removal, removing=gone)
            if why is not None:
                found[step.path] = why
        return found

    def apply(self, blobs: Blobs, ready: Callable[[], object] | None = None) -> RestoreReport:
        """Do every step, or none: on a failure the done ones are undone. ``ready`` is
        called once the checks passed, before the first step."""
        blocked = self.blocked()
        if blocked:
            return self.report(blocked=blocked)
        if ready is not None:
            ready()
        ordered = sorted((s for s in self.steps if s.removal), key=lambda s: s.rel, reverse=True)
        ordered += [s for s in self.steps if not s.removal]
        data = blobs([s.blob for s in ordered if not s.removal])
        done: list[Step] = []
        for step in ordered:
            try:
                why = _do(step, step.mode, data.get(step.blob, b""))
            except OSError as exc:
                why = f"it could not be written ({exc.strerror or exc})"
            if why is not None:
                _undo(done, blobs)
                return self.report(blocked={step.path: why})
            done.append(step)
        self.done = done
        return self.report(done=done)

    def report(
        self, *, done: list[Step] | None = None, blocked: dict[Path, str] | None = None
    ) -> RestoreReport:
        """What was done (``done``), or why nothing was (``blocked``)."""
        done = done or []
        restored = [s.path for s in done if not s.removal and s.was_mode != ABSENT]
        recreated = [s.path for s in done if not s.removal and s.was_mode == ABSENT]
        return RestoreReport(
            tuple(sorted(restored)),
            tuple(sorted(s.path for s in done if s.removal)),
            tuple(sorted(recreated)),
            tuple(sorted(self.kept)),
            dict(sorted(self.skipped.items())),
            dict(sorted((blocked or {}).items())),
        )


def _do(step: Step, mode: str, data: bytes) -> str | None:
    if mode == ABSENT:
        return files.remove(step.directory, step.rel)
    return files.write(step.directory, step.rel, int(mode, 8), data)


def _undo(done: list[Step], blobs: Blobs) -> None:
    """Put back the files the done steps changed, last first (as they were before)."""
    data = blobs([s.was_blob for s in done if s.was_mode != ABSENT])
    for step in reversed(done):
        try:
            _do(step, step.was_mode, data.get(step.was_blob, b""))
        except OSError:
            continue  # the report names the failure; /rewind undo has the files as they were


__all__ = ["ABSENT", "Plan", "Step"]

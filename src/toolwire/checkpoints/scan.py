"""Bringing a directory's shadow index up to date with its files, cheaply.

``git ls-files -o -m -d`` lists only what differs from the index: untracked files that no
ignore rule covers, and tracked files whose stat data changed (their content compared
only then) or that are gone. So an unchanged tree of 10,000 files costs one pass of
``lstat`` in git and hashes nothing; only the listed paths are checked here and handed to
one ``git update-index``. Three processes per directory, whatever its size.

Ignore rules: the directory's ``.gitignore`` files (git reads them), the user's
repository's ``.git/info/exclude`` and the global excludes file (passed explicitly, since
the store reads neither). An untracked directory holding its own ``.git`` (an embedded
repository) is listed by git as ``name/`` and is left out, as are files over the size
cap and anything that is neither a file nor a symlink.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from toolwire.checkpoints.files import safe_parent
from toolwire.checkpoints.git import global_excludes, run

EMBEDDED = "an embedded git repository (it has its own history)"
NOT_REGULAR = "not a regular file"


@dataclass(frozen=True, slots=True)
class Scan:
    """A directory as its shadow index now holds it."""

    tree: str
    skipped: dict[str, str]
    """Relative path: why it is not in ``tree``."""


def excludes_for(directory: Path) -> list[Path]:
    """The ignore files git would read for ``directory`` beyond its ``.gitignore`` files."""
    found = []
    for parent in (directory, *directory.parents):
        dot_git = parent / ".git"
        if dot_git.exists():
            exclude = dot_git / "info" / "exclude"
            if exclude.is_file():
                found.append(exclude)
            break
    extra = global_excludes()
    return [*found, extra] if extra else found


def scan(store: Path, index: Path, directory: Path, max_bytes: int, excludes: list[Path]) -> Scan:
    """Update ``index`` to the files of ``directory`` now and write its tree."""

    def git(args: list[str], stdin: bytes = b"") -> bytes:
        return run(store, args, work_tree=directory, index=index, stdin=stdin)

    listing = ["ls-files", "-z", "-o", "-m", "-d", "--exclude-standard"]
    listing += [f"--exclude-from={path}" for path in excludes]
    changed = sorted({p for p in git(listing).split(b"\0") if p})
    update, drop, skipped = _sort_out(directory, changed, max_bytes)
    if drop:
        git(["update-index", "-z", "--force-remove", "--stdin"], _z(drop))
    if update:
        # --replace: a file may now stand where a directory was, or the other way round.
        git(["update-index", "-z", "--add", "--remove", "--replace", "--stdin"], _z(update))
    tree = git(["write-tree"]).decode().strip()
    return Scan(tree, skipped)


def _sort_out(
    directory: Path, changed: list[bytes], max_bytes: int
) -> tuple[list[bytes], list[bytes], dict[str, str]]:
    """(paths to update, paths to drop from the index, skipped paths with reasons)."""
    update: list[bytes] = []
    drop: list[bytes] = []
    skipped: dict[str, str] = {}
    for raw in changed:
        rel = os.fsdecode(raw)
        if rel.endswith("/"):
            skipped[rel.rstrip("/")] = EMBEDDED
            continue
        if safe_parent(directory, rel, create=False) is None:
            drop.append(raw)  # now behind a symlink: git will not look through it
            continue
        try:
            info = os.lstat(directory / rel)
        except FileNotFoundError:
            update.append(raw)
            continue
        reason = _reason(info, max_bytes)
        if reason is None:
            update.append(raw)
        else:
            skipped[rel] = reason
            drop.append(raw)
    return update, drop, skipped


def _reason(info: os.stat_result, max_bytes: int) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return NOT_REGULAR
    if info.st_size > max_bytes:
        return f"over the size cap ({info.st_size:,} > {max_bytes:,} bytes)"
    return None


def _z(paths: list[bytes]) -> bytes:
    return b"".join(p + b"\0" for p in paths)


__all__ = ["EMBEDDED", "NOT_REGULAR", "Scan", "excludes_for", "scan"]

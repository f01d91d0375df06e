"""``Checkpoints``: one session's snapshots in its own shadow git store.

Layout under the root (``$XDG_DATA_HOME/toolwire/checkpoints`` by default)::

    <session id>/            a bare git repository, used only through plumbing
        refs/checkpoints/N   one ref per snapshot: a commit whose tree has one subtree
                             per directory and whose message is the snapshot's JSON
        indexes/<hash>       each directory's own index: its stat cache

Nothing is ever written in the user's repository; files are written in the session's
directories only by ``restore`` (``files.py`` keeps it inside them).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from toolwire.checkpoints import objects
from toolwire.checkpoints.git import ATTRIBUTES, STORE_CONFIG, CheckpointError, run
from toolwire.checkpoints.model import Changes, RestoreReport, Snapshot
from toolwire.checkpoints.restore import Plan, Step
from toolwire.checkpoints.rules import before, conflicts, pruned, strict_windows
from toolwire.checkpoints.scan import NOT_REGULAR, Scan, excludes_for, scan
from toolwire.errors import UsageError

DEFAULT_MAX_FILE_BYTES = 10_000_000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_REFS = "refs/checkpoints/"
SKIPPED_THEN = "skipped when the snapshot was taken"
_Entry = tuple[str, str, str, str, str]  # relative path, old mode and blob, new mode and blob


def default_root() -> Path:
    """``$XDG_DATA_HOME/toolwire/checkpoints``, by default ``~/.local/share/toolwire/...``."""
    base = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "toolwire" / "checkpoints"


def store_dir(root: Path, session_id: str) -> Path:
    """Where a session's store lives; an id that is not a plain file name is hashed."""
    if _NAME.fullmatch(session_id) and not session_id.endswith(".lock"):
        return root / session_id
    return root / hashlib.sha256(session_id.encode()).hexdigest()


class Checkpoints:
    """The snapshots of one session's directories. Open with ``Checkpoints.open``."""

    def __init__(self, store: Path, directories: Sequence[Path], max_file_bytes: int) -> None:
        self.store = store
        self.directories = tuple(directories)
        self.max_file_bytes = max_file_bytes
        self._excludes = {d: excludes_for(d) for d in self.directories}

    @classmethod
    def open(
        cls,
        root: Path,
        session_id: str,
        directories: Iterable[Path | str],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> Checkpoints:
        """The session's store under ``root``, created on first use; snapshots taken by
        an earlier process are there again."""
        dirs = list(dict.fromkeys(Path(d).resolve() for d in directories))
        if not all(d.is_dir() for d in dirs):
            raise UsageError(f"checkpoints need existing directories: {dirs}")
        store = store_dir(root, session_id)
        if not (store / "HEAD").exists():
            _init(store)
        return cls(store, dirs, max_file_bytes)

    def take(self, name: str) -> Snapshot:
        """Snapshot every directory now as ``name`` (a snapshot of that name is replaced).
        When it fails, an older snapshot of that name is dropped (it would stand for now)
        and the reason kept for ``failure``."""
        if not _NAME.fullmatch(name) or name.endswith(".lock"):
            raise UsageError(f"not a snapshot name: {name!r}")
        failed = self.store / "failed" / name
        try:
            scans = {d: self._scan(d) for d in self.directories}
        except CheckpointError as exc:
            self._forget(name)
            with contextlib.suppress(OSError):  # the reason is in the error raised anyway
                failed.parent.mkdir(exist_ok=True)
                failed.write_text(f"{exc}\n", encoding="utf-8")
            raise
        failed.unlink(missing_ok=True)
        subtrees = [(str(i), s.tree) for i, s in enumerate(scans.values())]
        tree = objects.write_object(self.store, "tree", objects.tree(subtrees))
        taken_at = time.time()
        meta = {
            "name": name,
            "taken_at": taken_at,
            "dirs": {str(d): {"tree": s.tree, "skipped": s.skipped} for d, s in scans.items()},
        }
        message = f"checkpoint {name}\n\n{json.dumps(meta)}\n"
        commit = objects.write_object(self.store, "commit", objects.commit(tree, message, taken_at))
        objects.set_ref(self.store, _REFS + name, commit)
        return _snapshot(commit, meta)

    def failure(self, name: str) -> str | None:
        """Why the last attempt at snapshot ``name`` failed; None when it did not."""
        try:
            return (self.store / "failed" / name).read_text(encoding="utf-8").strip()
        except OSError:
            return None

    def _forget(self, name: str) -> None:
        with contextlib.suppress(OSError, CheckpointError):
            run(self.store, ["update-ref", "-d", _REFS + name])

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, oldest first."""
        fmt = "--format=%(objectname)%00%(contents:body)%00"
        out = run(self.store, ["for-each-ref", fmt, _REFS]).split(b"\0")
        found = [
            _snapshot(commit.decode().strip(), json.loads(body))
            for commit, body in zip(out[0::2], out[1::2], strict=False)
            if commit.strip()
        ]
        return sorted(found, key=lambda s: s.taken_at)

    def get(self, name: str) -> Snapshot | None:
        """The snapshot named ``name``, if it was taken (and not pruned)."""
        return next((s for s in self.snapshots() if s.name == name), None)

    def changed(self, since: Snapshot, until: Snapshot | None = None) -> Changes:
        """What changed from ``since`` to ``until`` (None: the files now). A file skipped
        on either side (too big, an embedded repository) is not a change."""
        modified: set[Path] = set()
        added: set[Path] = set()
        deleted: set[Path] = set()
        for d in dict.fromkeys([*since.trees, *(until.trees if until else self.directories)]):
            after, skipped_now = self._side(d, until)
            skipped = _skipped_in(d, since) | skipped_now
            for rel, old_mode, _, new_mode, _ in self._diff(since.trees.get(d, EMPTY_TREE), after):
                if _covered(rel, skipped):
                    continue
                kind = deleted if _absent(new_mode) else added if _absent(old_mode) else modified
                kind.add(d / rel)
        return Changes(frozenset(modified), frozenset(added), frozenset(deleted))

    def conflicts(self, target: int, last: int) -> frozenset[Path]:
        """Files changed outside any turn since before prompt ``target`` (a rewind must
        not overwrite them). A missing snapshot widens its window (``rules.strict_windows``):
        a file whose change no snapshot places inside a turn is a conflict."""
        taken = {s.name: s for s in self.snapshots()}
        if before(target) not in taken:
            raise UsageError(f"no snapshot {before(target)} to compare with")
        windows = []
        for since, until in strict_windows(target, last, taken):
            windows.append(self.changed(taken[since], taken[until] if until else None))
        return conflicts(windows)

    def restore(
        self, to: Snapshot, *, keep: Iterable[Path] = (), mark: str | None = None
    ) -> RestoreReport:
        """Put the files back as they were at ``to``: changed files restored, files
        created since removed, deleted ones recreated. Files in ``keep``, and those
        skipped now or then, are left as they are. All or nothing (``restore.Plan``):
        when one file cannot be done, none is, and ``RestoreReport.blocked`` says why.
        ``mark``: a snapshot of the files now is taken under that name once the checks
        passed, before any file moves (never when the restore is blocked)."""
        kept_paths = {Path(p) for p in keep}
        plan = Plan()
        for d, tree in to.trees.items():
            if d in self.directories:
                self._plan(d, tree, _skipped_in(d, to), kept_paths, plan)
        report = plan.apply(self._blobs, (lambda: self.take(mark)) if mark else None)
        for d in self.directories:
            touched = [s.rel for s in plan.done if s.directory == d]
            if touched:  # fresh stat data: the next take hashes none of the files written
                refresh = ["update-index", "-z", "--add", "--remove", "--replace", "--stdin"]
                run(self.store, refresh, work_tree=d, index=self._index(d), stdin=_z(touched))
        return report

    def fork(self, new_session_id: str) -> Checkpoints:
        """A store for a forked session holding the same snapshots. Objects are
        hard-linked (no copy of their bytes; either store may be deleted later)."""
        target = store_dir(self.store.parent, new_session_id)
        if target.exists():
            raise UsageError(f"a checkpoint store already exists for {new_session_id!r}")
        locks = shutil.ignore_patterns("*.lock")  # neither the store's nor a stale one of git's
        shutil.copytree(self.store, target, copy_function=_link_or_copy, ignore=locks)
        return Checkpoints(target, self.directories, self.max_file_bytes)

    def delete(self) -> None:
        """Remove the session's store and every snapshot in it."""
        shutil.rmtree(self.store, ignore_errors=True)

    def prune(self, keep: int) -> list[str]:
        """Drop the snapshots of all but the last ``keep`` prompts and collect their
        objects; the names dropped."""
        dropped = pruned((s.name for s in self.snapshots()), keep)
        if dropped:
            commands = "".join(f"delete {_REFS}{name}\n" for name in dropped)
            run(self.store, ["update-ref", "--stdin"], stdin=commands.encode())
            run(self.store, ["gc", "--prune=now", "--quiet"])
        return dropped

    # -- one directory ------------------------------------------------------------------

    def _index(self, directory: Path) -> Path:
        return self.store / "indexes" / hashlib.sha1(str(directory).encode()).hexdigest()[:16]

    def _scan(self, directory: Path) -> Scan:
        index = self._index(directory)
        return scan(self.store, index, directory, self.max_file_bytes, self._excludes[directory])

    def _side(self, directory: Path, until: Snapshot | None) -> tuple[str, set[str]]:
        if until is not None:
            return until.trees.get(directory, EMPTY_TREE), _skipped_in(directory, until)
        if directory not in self.directories:
            return EMPTY_TREE, set()
        now = self._scan(directory)
        return now.tree, set(now.skipped)

    def _diff(self, a: str, b: str) -> list[_Entry]:
        out = run(self.store, ["diff-tree", "-r", "-z", "--no-renames", a, b]).split(b"\0")
        entries = []
        for head, path in zip(out[0::2], out[1::2], strict=False):
            old_mode, new_mode, old_blob, new_blob, _ = head.decode().lstrip(":").split(" ")
            entries.append((os.fsdecode(path), old_mode, old_blob, new_mode, new_blob))
        return entries

    def _plan(self, d: Path, tree: str, skipped: set[str], keep: set[Path], plan: Plan) -> None:
        """Add to ``plan`` what restoring directory ``d`` to ``tree`` takes."""
        now = self._scan(d)
        # A directory or a pipe now where the snapshot had a file is in the restore's way
        # (``writable``), not a file to leave alone as big ones are.
        left = {rel: why for rel, why in now.skipped.items() if why != NOT_REGULAR}
        plan.skipped.update({d / rel: SKIPPED_THEN for rel in skipped})
        plan.skipped.update({d / rel: why for rel, why in left.items()})
        skipped |= set(left)
        for rel, old_mode, old_blob, new_mode, new_blob in self._diff(tree, now.tree):
            if _covered(rel, skipped):
                plan.skipped[d / rel] = left.get(rel) or SKIPPED_THEN
            elif d / rel in keep:
                plan.kept.append(d / rel)
            else:
                plan.steps.append(Step(d, rel, old_mode, old_blob, new_mode, new_blob))

    def _blobs(self, shas: list[str]) -> dict[str, bytes]:
        if not shas:
            return {}
        out = run(
            self.store, ["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in shas).encode()
        )
        blobs: dict[str, bytes] = {}
        at = 0
        while at < len(out):
            end = out.index(b"\n", at)
            sha, _, size = out[at:end].decode().split(" ")
            start = end + 1
            blobs[sha] = out[start : start + int(size)]
            at = start + int(size) + 1
        return blobs


def _init(store: Path) -> None:
    store.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    run(store, ["init", "--quiet", "--bare", str(store)])
    for key, value in STORE_CONFIG.items():
        run(store, ["config", key, value])
    (store / "info").mkdir(exist_ok=True)
    (store / "info" / "attributes").write_text(ATTRIBUTES)
    (store / "indexes").mkdir(exist_ok=True)
    shutil.rmtree(store / "hooks", ignore_errors=True)


def _snapshot(commit: str, meta: dict[str, object]) -> Snapshot:
    dirs = meta["dirs"]
    assert isinstance(dirs, dict)
    return Snapshot(
        name=str(meta["name"]),
        commit=commit,
        taken_at=float(meta["taken_at"]),  # type: ignore[arg-type]
        trees={Path(d): v["tree"] for d, v in dirs.items()},
        skipped={Path(d) / rel: why for d, v in dirs.items() for rel, why in v["skipped"].items()},
    )


def _skipped_in(directory: Path, snapshot: Snapshot) -> set[str]:
    return {str(p.relative_to(directory)) for p in snapshot.skipped if p.is_relative_to(directory)}


def _covered(rel: str, skipped: set[str]) -> bool:
    return rel in skipped or any(rel.startswith(s + "/") for s in skipped)


def _z(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _absent(mode: str) -> bool:
    return mode == "000000"


def _link_or_copy(src: str, dst: str) -> None:
    # git replaces every file it changes by renaming a new one over it, so a hard link
    # shared by two stores is never written through.
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


__all__ = ["DEFAULT_MAX_FILE_BYTES", "Checkpoints", "default_root", "store_dir"]

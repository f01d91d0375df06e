"""A restore never undoes the user's work and never half-applies; a killed process
leaves no store that refuses every later checkpoint."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolwire
from tests.checkpoints.support import chattr, immutable_allowed, sh, tree
from toolwire.checkpoints import (
    CheckpointError,
    Checkpoints,
    after,
    before,
    files,
    lock,
    strict_windows,
)
from toolwire.checkpoints.files import IN_THE_WAY
from toolwire.checkpoints.git import clean_env
from toolwire.checkpoints.writable import IMMUTABLE, READ_ONLY


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".toolwire-restore")]


@pytest.fixture
def immutable(tmp_path: Path) -> None:
    if not immutable_allowed(tmp_path):
        pytest.skip("chattr +i is not allowed here (needs CAP_LINUX_IMMUTABLE and ext4/xfs)")


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """``chattr +i path`` for the block."""
    assert chattr("+i", path)
    try:
        yield
    finally:
        chattr("-i", path)


# -- a turn stopped mid-way (no after-N): the user's edits stay conflicts -----------------


def test_strict_windows_widen_to_the_snapshots_that_exist() -> None:
    taken = {"before-1", "after-1", "before-2", "before-3", "after-3"}
    assert strict_windows(1, 3, taken) == [
        ("after-1", "before-2"),
        ("before-2", "before-3"),  # after-2 missing: from before prompt 2
        ("after-3", None),
    ]
    assert strict_windows(2, 2, {"before-2"}) == [("before-2", None)]
    assert strict_windows(1, 2, {"before-1", "after-1"}) == [("after-1", None), ("after-1", None)]


def test_a_user_edit_after_a_killed_turn_is_a_conflict(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    sh(repo, "echo agent > src/app.py")  # the turn, then the agent is killed: no after-1
    sh(repo, "echo 'the user by hand' > src/util.py")
    found = cps.conflicts(target=1, last=1)
    assert repo / "src" / "util.py" in found
    cps.restore(cps.get(before(1)) or pytest.fail("no snapshot"), keep=found)
    assert (repo / "src" / "util.py").read_text() == "the user by hand\n"


def test_a_killed_turn_in_the_middle_keeps_the_edits_after_it(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    sh(repo, "echo agent > src/app.py")
    cps.take(after(1))
    cps.take(before(2))
    sh(repo, "echo agent > fresh.txt")  # killed: no after-2
    sh(repo, "echo mine > draft.md")  # the user, before the restart
    cps.take(before(3))
    cps.take(after(3))
    assert repo / "draft.md" in cps.conflicts(target=1, last=3)


# -- a stale git lock in the store ---------------------------------------------------------


def test_a_lock_left_by_a_killed_git_is_recovered(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    index = next((cps.store / "indexes").iterdir())
    Path(f"{index}.lock").write_bytes(b"half an index")  # what a kill mid-write leaves
    sh(repo, "echo changed > src/app.py")
    snap = cps.take(before(2))  # refused by git before the lock was recovered
    assert not Path(f"{index}.lock").exists()
    assert cps.changed(cps.get(before(1)) or pytest.fail("no snapshot"), snap)
    assert cps.failure(before(2)) is None


def test_a_lock_left_by_a_git_killed_mid_update_is_recovered(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    index = next((cps.store / "indexes").iterdir())
    command = ["git", f"--git-dir={cps.store}", f"--work-tree={repo}", "update-index", "--stdin"]
    # git takes the index's lock, then waits for its input: killed there, as a
    # process-group kill of the agent would kill it, it leaves the lock behind.
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, env=clean_env(index), stderr=subprocess.DEVNULL
    ) as killed:
        for _ in range(200):
            if Path(f"{index}.lock").exists():
                break
            time.sleep(0.01)
        killed.kill()
    assert Path(f"{index}.lock").exists()
    sh(repo, "echo changed > src/app.py")
    then = cps.get(before(1))
    assert then is not None
    assert repo / "src" / "app.py" in cps.changed(then).paths()
    cps.take(before(2))
    assert not Path(f"{index}.lock").exists()


def test_a_lock_of_a_live_toolwire_is_waited_for_never_removed(
    repo: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    index = next((cps.store / "indexes").iterdir())
    live = Path(f"{index}.lock")
    holder = "import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); "
    holder += "open(sys.argv[2], 'w').close(); print('held', flush=True); time.sleep(30)"
    with subprocess.Popen(
        [sys.executable, "-c", holder, str(cps.store / "toolwire.lock"), str(live)],
        stdout=subprocess.PIPE,
    ) as other:  # another toolwire process, in the middle of its git command
        assert other.stdout is not None
        assert other.stdout.readline() == b"held\n"
        monkeypatch.setattr(lock, "WAIT", 0.5)
        with pytest.raises(CheckpointError, match="busy"):
            cps.take(before(2))
        assert live.exists()  # its lock was left alone
        other.kill()


def test_a_failed_checkpoint_is_recorded_and_drops_its_old_namesake(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(2))  # an earlier prompt 2, since rewound
    index = next((cps.store / "indexes").iterdir())
    index.unlink()
    index.mkdir()  # git cannot read or write it now
    with pytest.raises(CheckpointError):
        cps.take(before(2))
    assert cps.get(before(2)) is None  # the old one must not stand for the new prompt 2
    assert "failed" in (cps.failure(before(2)) or "")


# -- all or nothing ------------------------------------------------------------------------


def _three_changes(repo: Path) -> dict[str, bytes]:
    sh(repo, "echo agent1 > src/app.py && echo agent2 > run.sh && echo agent3 > draft.md")
    return {rel: (repo / rel).read_bytes() for rel in ("src/app.py", "run.sh", "draft.md")}


def _unchanged(repo: Path, now: dict[str, bytes]) -> None:
    assert {rel: (repo / rel).read_bytes() for rel in now} == now
    assert _temps(repo) == []


def test_a_directory_in_the_way_stops_the_whole_restore(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take(before(1))
    now = _three_changes(repo)
    sh(repo, "rm notes.txt && mkdir notes.txt && echo kept > notes.txt/build.log")  # ignored
    report = cps.restore(snap)
    assert report.blocked == {repo / "notes.txt": IN_THE_WAY}
    assert report.restored == report.removed == report.recreated == ()
    _unchanged(repo, now)
    (repo / "notes.txt" / "build.log").unlink()
    (repo / "notes.txt").rmdir()
    files_then = tree(repo)
    assert cps.restore(snap).restored  # once it is moved, the restore goes through
    assert tree(repo) != files_then


@pytest.mark.usefixtures("immutable")
def test_an_immutable_file_stops_the_whole_restore(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take(before(1))
    now = _three_changes(repo)
    with _immutable(repo / "run.sh"):
        report = cps.restore(snap)
        _unchanged(repo, now)
    assert report.blocked == {repo / "run.sh": IMMUTABLE}
    assert report.restored == ()


@pytest.mark.usefixtures("immutable")
def test_an_immutable_directory_stops_the_whole_restore(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take(before(1))
    now = _three_changes(repo)
    with _immutable(repo / "src"):
        report = cps.restore(snap)
        _unchanged(repo, now)
    assert list(report.blocked) == [repo / "src" / "app.py"]


_RESTORE = """
import json, sys
from pathlib import Path
from toolwire.checkpoints import Checkpoints
repo, root = Path(sys.argv[1]), Path(sys.argv[2])
cps = Checkpoints.open(root, "s1", [repo])
report = cps.restore(cps.get("before-1"))
print(json.dumps({str(p): why for p, why in report.blocked.items()}))
"""


def _restore_read_only(repo: Path, root: Path, read_only: Path) -> dict[str, str]:
    """The restore of ``before-1`` run where ``read_only`` cannot be written: a read-only
    bind mount (bubblewrap), since root writes through any permission bits."""
    command = [sys.executable, "-c", _RESTORE, str(repo), str(root)]
    if os.geteuid() == 0:
        command = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(read_only), str(read_only),
                   *command]  # fmt: skip
    else:
        read_only.chmod(0o555)
    env = {**os.environ, "PYTHONPATH": str(Path(toolwire.__file__).parents[1])}
    try:
        done = subprocess.run(command, capture_output=True, check=True, env=env, timeout=60)
    finally:
        read_only.chmod(0o755)
    return dict(json.loads(done.stdout))


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("bwrap") is None, reason="as root, needs bubblewrap"
)
def test_a_read_only_directory_stops_the_whole_restore(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    now = _three_changes(repo)
    blocked = _restore_read_only(repo, root, repo / "src")
    assert blocked == {str(repo / "src" / "app.py"): READ_ONLY}
    _unchanged(repo, now)


def test_a_failure_mid_way_undoes_what_was_done(
    repo: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take(before(1))
    now = _three_changes(repo)
    sh(repo, "echo new > fresh.txt")
    write, calls = files.write, []

    def failing(directory: Path, rel: str, mode: int, data: bytes) -> str | None:
        calls.append(rel)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return write(directory, rel, mode, data)

    monkeypatch.setattr(files, "write", failing)
    report = cps.restore(snap)
    monkeypatch.undo()
    assert list(report.blocked.values()) == ["it could not be written (No space left on device)"]
    _unchanged(repo, now)
    assert (repo / "fresh.txt").read_text() == "new\n"  # removed, then put back


# -- a named pipe git would open ----------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux's /proc")
def test_a_gitignore_that_is_a_fifo_fails_the_checkpoint_instead_of_hanging(
    repo: Path, root: Path
) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    os.mkfifo(repo / "src" / ".gitignore")
    started = time.monotonic()
    with pytest.raises(CheckpointError, match="named pipe"):
        cps.take(before(2))
    assert time.monotonic() - started < 10
    assert "named pipe" in (cps.failure(before(2)) or "")

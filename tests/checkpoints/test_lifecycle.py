"""A session's checkpoints across prompts, restarts, forks, retention and deletion."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.support import git, sh, tree
from toolwire.checkpoints import Checkpoints, after, before, unavailable
from toolwire.checkpoints.git import clean_env


def prompts(cps: Checkpoints, repo: Path, count: int) -> None:
    """``count`` turns, each changing one file of its own between its two snapshots."""
    for n in range(1, count + 1):
        cps.take(before(n))
        (repo / f"turn{n}.txt").write_text(f"turn {n}\n")
        cps.take(after(n))


def test_a_user_edit_between_prompts_is_a_conflict(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    sh(repo, "echo agent > src/app.py")
    cps.take(after(1))
    sh(repo, "echo user > src/util.py")  # in the editor, between prompts
    cps.take(before(2))
    sh(repo, "echo agent > fresh.txt")
    cps.take(after(2))
    sh(repo, "echo user-again > draft.md")  # after the last turn
    found = cps.conflicts(target=1, last=2)
    assert found == {repo / "src/util.py", repo / "draft.md"}
    assert cps.conflicts(target=2, last=2) == {repo / "draft.md"}
    report = cps.restore(cps.get(before(1)) or pytest.fail("no snapshot"), keep=found)
    assert (repo / "src/util.py").read_text() == "user\n"
    assert (repo / "draft.md").read_text() == "user-again\n"
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert not (repo / "fresh.txt").exists()
    assert set(report.kept) == found


def test_snapshots_survive_a_restart(repo: Path, root: Path) -> None:
    files = tree(repo)
    first = Checkpoints.open(root, "s1", [repo])
    prompts(first, repo, 2)
    again = Checkpoints.open(root, "s1", [repo])
    assert [s.name for s in again.snapshots()] == ["before-1", "after-1", "before-2", "after-2"]
    again.restore(again.get(before(1)) or pytest.fail("no snapshot"))
    assert tree(repo) == files


def test_a_fork_shares_the_snapshots_and_outlives_its_parent(repo: Path, root: Path) -> None:
    files = tree(repo)
    parent = Checkpoints.open(root, "s1", [repo])
    prompts(parent, repo, 2)
    child = parent.fork("s2")
    parent.delete()
    assert not parent.store.exists()
    assert [s.name for s in child.snapshots()][:1] == ["before-1"]
    child.restore(child.get(before(1)) or pytest.fail("no snapshot"))
    assert tree(repo) == files
    assert git(repo, "--git-dir", str(child.store), "fsck", "--no-progress") == b""


def test_delete_removes_the_store(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    cps.take(before(1))
    cps.delete()
    assert not (root / "s1").exists()
    assert Checkpoints.open(root, "s1", [repo]).snapshots() == []


def test_prune_keeps_the_last_prompts_and_collects_the_rest(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    (repo / "old.bin").write_bytes(os.urandom(200_000))
    cps.take(before(1))
    (repo / "old.bin").unlink()
    cps.take(after(1))
    prompts_from = 2
    for n in range(prompts_from, 5):
        cps.take(before(n))
        cps.take(after(n))
    cps.take("undo")
    size = _store_bytes(cps.store)
    assert cps.prune(keep=2) == ["after-1", "after-2", "before-1", "before-2"]
    assert [s.name for s in cps.snapshots()] == [
        "before-3",
        "after-3",
        "before-4",
        "after-4",
        "undo",
    ]
    assert _store_bytes(cps.store) < size - 150_000


def test_session_ids_never_leave_the_root(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "../../escape", [repo])
    assert cps.store.parent == root


def test_without_git_checkpoints_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    assert unavailable() is None
    monkeypatch.setenv("PATH", "/nonexistent")
    assert unavailable() == "checkpoints are off: git was not found on PATH"


def _store_bytes(store: Path) -> int:
    return sum(p.stat().st_size for p in store.rglob("*") if p.is_file())


def test_git_reads_the_snapshots_as_its_own(repo: Path, root: Path, tmp_path: Path) -> None:
    # The snapshot's tree, commit and ref are written without git (objects.py): git's own
    # fsck and ls-tree must find them valid, through takes, a prune and a restore; eleven
    # directories, so the subtrees "10" and "2" test git's entry order.
    others = [tmp_path / f"other{i}" for i in range(10)]
    for other in others:
        other.mkdir()
        (other / "notes.md").write_text("notes\n")
    cps = Checkpoints.open(root, "s1", [repo, *others])
    prompts(cps, repo, 4)
    cps.prune(2)
    cps.restore(cps.get(before(3)) or pytest.fail("no snapshot"))
    store = root / "s1"
    checked = subprocess.run(
        ["git", f"--git-dir={store}", "fsck", "--strict", "--no-dangling"],
        capture_output=True, text=True, env=clean_env(), check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr + checked.stdout
    snapshot = cps.get(after(4)) or pytest.fail("no snapshot")
    shown = subprocess.run(
        ["git", f"--git-dir={store}", "ls-tree", "-r", "--name-only", snapshot.commit],
        capture_output=True, text=True, env=clean_env(), check=True,
    ).stdout.split()  # fmt: skip
    assert "0/turn4.txt" in shown
    assert "1/notes.md" in shown
    assert "10/notes.md" in shown

"""Snapshots and restores of real directories, changed the way tools and commands do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.checkpoints.support import git, repo_state, sh, tree
from toolwire.checkpoints import Checkpoints, before
from toolwire.checkpoints.files import OUTSIDE, remove, write


def change_everything(repo: Path) -> None:
    """An Edit, a Write of a new file, then Bash: ``sed -i``, ``touch`` and ``rm``."""
    app = repo / "src" / "app.py"
    app.write_text(app.read_text().replace("return 1", "return 2"))
    (repo / "src" / "new.py").write_text("NEW = True\n")
    sh(repo, "sed -i 's/hi/bye/' run.sh && touch fresh.txt && rm notes.txt")
    sh(repo, "mkdir -p deep/er && echo x > deep/er/f && ln -sf run.sh link.py")


def test_restore_gives_back_the_tree_byte_for_byte(repo: Path, root: Path) -> None:
    state, files = repo_state(repo), tree(repo)
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take(before(1))
    assert repo_state(repo) == state
    change_everything(repo)
    report = cps.restore(snap)
    assert tree(repo) == files
    assert repo_state(repo) == state
    assert report.restored == (repo / "link.py", repo / "run.sh", repo / "src" / "app.py")
    assert report.recreated == (repo / "notes.txt",)
    assert report.removed == (repo / "deep/er/f", repo / "fresh.txt", repo / "src/new.py")
    assert not (repo / "deep").exists()
    assert os.stat(repo / "run.sh").st_mode & 0o111


def test_changed_names_each_kind(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    change_everything(repo)
    now = cps.changed(snap)
    assert now.modified == {repo / "src/app.py", repo / "run.sh", repo / "link.py"}
    assert now.added == {repo / "src/new.py", repo / "fresh.txt", repo / "deep/er/f"}
    assert now.deleted == {repo / "notes.txt"}
    later = cps.take("after-1")
    assert cps.changed(snap, later) == now
    assert not cps.changed(later)


def test_a_touch_alone_is_no_change(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    sh(repo, "touch src/app.py")
    assert not cps.changed(snap)


def test_a_directory_that_is_no_repository(tmp_path: Path, root: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    files = tree(plain)
    cps = Checkpoints.open(root, "s1", [plain])
    snap = cps.take("before-1")
    sh(plain, "echo b > a.txt && echo c > c.txt")
    cps.restore(snap)
    assert tree(plain) == files
    assert not (plain / ".git").exists()


def test_ignored_and_oversize_files_are_neither_saved_nor_restored(repo: Path, root: Path) -> None:
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"1")
    (repo / "big.dat").write_bytes(b"x" * 2000)
    cps = Checkpoints.open(root, "s1", [repo], max_file_bytes=1000)
    snap = cps.take("before-1")
    assert snap.skipped == {repo / "big.dat": "over the size cap (2,000 > 1,000 bytes)"}
    (repo / "build" / "out.bin").write_bytes(b"2")
    (repo / "big.dat").write_bytes(b"y" * 3000)
    (repo / "debug.log").write_text("log\n")
    (repo / "grown.txt").write_bytes(b"z" * 5000)
    report = cps.restore(snap)
    assert (repo / "build" / "out.bin").read_bytes() == b"2"
    assert (repo / "big.dat").read_bytes() == b"y" * 3000
    assert (repo / "debug.log").exists()
    assert (repo / "grown.txt").exists()
    assert set(report.skipped) == {repo / "big.dat", repo / "grown.txt"}
    objects = git(repo, "--git-dir", str(cps.store), "rev-list", "--objects", "--all")
    assert b"big.dat" not in objects
    assert b"out.bin" not in objects


def test_a_file_that_grew_past_the_cap_is_not_removed(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo], max_file_bytes=1000)
    snap = cps.take("before-1")
    (repo / "src" / "util.py").write_bytes(b"#" * 5000)
    report = cps.restore(snap)
    assert (repo / "src" / "util.py").read_bytes() == b"#" * 5000
    assert repo / "src" / "util.py" in report.skipped


def test_files_kept_are_left_as_they_are(repo: Path, root: Path) -> None:
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    sh(repo, "echo mine > src/app.py && echo theirs > src/util.py")
    report = cps.restore(snap, keep={repo / "src" / "app.py"})
    assert (repo / "src" / "app.py").read_text() == "mine\n"
    assert (repo / "src" / "util.py").read_text() == "X = 3\n"
    assert report.kept == (repo / "src" / "app.py",)


def test_no_conversion_whatever_gitattributes_say(repo: Path, root: Path) -> None:
    (repo / ".gitattributes").write_text("* text=auto eol=lf\n*.txt filter=lfs\n")
    files = tree(repo)
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    (repo / "notes.txt").write_bytes(b"changed\n")
    cps.restore(snap)
    assert tree(repo) == files


def test_the_users_git_variables_do_not_reach_the_store(
    repo: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = repo_state(repo)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    sh(repo, "echo changed > src/app.py")
    cps.restore(snap)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert repo_state(repo) == state


def test_an_embedded_repository_is_skipped(repo: Path, root: Path) -> None:
    inner = repo / "vendor"
    inner.mkdir()
    git(inner, "init", "-q")
    (inner / "lib.c").write_text("int x;\n")
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    assert snap.skipped == {inner: "an embedded git repository (it has its own history)"}
    (inner / "lib.c").write_text("int y;\n")
    cps.restore(snap)
    assert (inner / "lib.c").read_text() == "int y;\n"


def test_a_symlink_put_in_place_of_a_directory_is_replaced_not_followed(
    repo: Path, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    files = tree(repo)
    cps = Checkpoints.open(root, "s1", [repo])
    snap = cps.take("before-1")
    sh(repo, f"rm -r src && ln -s {outside} src")
    report = cps.restore(snap)
    assert list(outside.iterdir()) == []
    assert tree(repo) == files
    assert repo / "src" in report.removed


def test_a_write_through_a_symlink_is_refused(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "out").symlink_to(outside)
    assert write(inside, "out/f.txt", 0o100644, b"x") == OUTSIDE
    assert write(inside, "../f.txt", 0o100644, b"x") == OUTSIDE
    assert remove(inside, "out/g.txt") == OUTSIDE
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "f.txt").exists()


def test_several_directories(repo: Path, root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("o\n")
    both = (tree(repo), tree(other))
    cps = Checkpoints.open(root, "s1", [repo, other])
    snap = cps.take("before-1")
    sh(other, "echo p > o.txt && touch q.txt")
    sh(repo, "rm draft.md")
    assert cps.changed(snap).paths() == {other / "o.txt", other / "q.txt", repo / "draft.md"}
    cps.restore(snap)
    assert (tree(repo), tree(other)) == both

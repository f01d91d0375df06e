"""Real directories for the checkpoint tests: a git repository and what to compare."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    # `git status` may refresh the index's stat data; what is compared is what we wrote.
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def chattr(flag: str, path: Path) -> bool:
    """``chattr FLAG path``; False when it is not allowed (no CAP_LINUX_IMMUTABLE, or a
    file system without the attribute)."""
    try:
        done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    except OSError:
        return False
    return done.returncode == 0


def immutable_allowed(where: Path) -> bool:
    """Whether ``chattr +i`` works in ``where`` (asked on a scratch file, then undone)."""
    probe = where / ".chattr-probe"
    probe.write_bytes(b"")
    allowed = chattr("+i", probe)
    chattr("-i", probe)
    probe.unlink()
    return allowed


def git(repo: Path, *args: str) -> bytes:
    """``git ARGS`` in ``repo``, as the user would run it."""
    return subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True
    ).stdout


def sh(repo: Path, command: str) -> None:
    """A shell command in ``repo``: how Bash changes files behind the tools' back."""
    subprocess.run(command, shell=True, cwd=repo, check=True)


def make_repo(path: Path) -> Path:
    """A repository with a commit, a staged change, a stash and an untracked file."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def main():\n    return 1\n")
    (path / "src" / "util.py").write_text("X = 1\n")
    (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (path / "run.sh").chmod(0o755)
    (path / "notes.txt").write_bytes(b"line one\r\nline two\r\n")
    (path / ".gitignore").write_text("build/\n*.log\n")
    os.symlink("src/app.py", path / "link.py")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    (path / "src" / "util.py").write_text("X = 2\n")
    git(path, "stash", "-q")
    (path / "src" / "util.py").write_text("X = 3\n")
    git(path, "add", "src/util.py")
    (path / "draft.md").write_text("draft\n")
    return path


def tree(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every file under ``root`` but ``.git``: kind, content (a link's target) and mode."""
    found: dict[str, tuple[str, bytes | str, int]] = {}
    for base, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" or Path(base) != root]
        for name in [*names, *(d for d in dirs if (Path(base) / d).is_symlink())]:
            path = Path(base) / name
            rel = str(path.relative_to(root))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path), 0)
            else:
                found[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def repo_state(repo: Path) -> dict[str, bytes]:
    """What the user's repository must keep across checkpoints and restores."""
    return {
        "index": (repo / ".git" / "index").read_bytes(),
        "status": git(repo, "status", "--porcelain", "--ignored"),
        "head": git(repo, "rev-parse", "HEAD"),
        "refs": git(repo, "for-each-ref"),
        "stash": git(repo, "stash", "list"),
        "config": (repo / ".git" / "config").read_bytes(),
        "hooks": "\n".join(sorted(os.listdir(repo / ".git" / "hooks"))).encode(),
    }

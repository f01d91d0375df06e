"""npm packages the real-client tests run, installed from their lock files on first use.

``make deps`` installs them before ``make check``; a test run directly (``pytest``,
``pytest -n auto``) installs a missing one itself, once: xdist workers that reach it
together queue on a lock file in its folder, and those that waited find it installed (two
``npm ci`` in one folder would delete each other's ``node_modules`` mid-install).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest


def npm_installed(
    folder: Path, marker: Path, target: str, timeout: float = 600, *, ci: bool = True
) -> None:
    """``npm ci`` in ``folder`` unless ``marker`` (a file or folder it installs) exists;
    ``npm install --no-save`` with ``ci=False``, for a lock whose optional platform builds
    the registry does not serve (``npm ci`` then counts the lock out of sync).

    Skips the test when npm is missing, naming the ``make`` target that installs it.
    """
    if marker.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed: cannot install {folder.name}'s packages ({target})")
    with (folder / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if not marker.exists():  # another worker installed it while this one waited
            _npm_install(npm, folder, target, timeout, ["ci"] if ci else ["install", "--no-save"])


def _npm_install(npm: str, folder: Path, target: str, timeout: float, how: list[str]) -> None:
    done = subprocess.run(
        [npm, *how, "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"npm {how[0]} failed (run `{target}`):\n{done.stderr}"

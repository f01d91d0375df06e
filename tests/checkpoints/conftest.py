from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.checkpoints.support import make_repo


@pytest.fixture(autouse=True)
def _needs_git() -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "data" / "toolwire" / "checkpoints"

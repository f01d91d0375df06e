"""The sandbox gives every command a private ``/tmp``, so the files these tests look at
live under ``/var/tmp``: visible inside the sandbox (read-only) as they are outside."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def base() -> Iterator[Path]:
    """A fresh directory under /var/tmp: project/, home/ and outside/ in it."""
    where = Path(tempfile.mkdtemp(prefix="toolwire-sandbox-", dir="/var/tmp"))
    for name in ("project", "home", "outside"):
        (where / name).mkdir()
    yield where
    shutil.rmtree(where, ignore_errors=True)

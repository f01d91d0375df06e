"""A clone without ``../shared`` beside it passes: each test that needs it skips up front.

Each test here copies the suite into a temporary directory (where ``../shared`` is absent,
or a small stand-in built here) and runs pytest there in a subprocess, as a fresh clone
would; nothing here reads the real ``../shared``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.e2e
VARIABLE = "TOOLWIRE_SHARED"  # the name the Makefile's test-bare sets

PROBE = """
from tests.helpers import RECORDED, needs_shared, read_stream


def test_unmarked() -> None:
    assert read_stream(RECORDED / "anthropic_tool_use.sse")


@needs_shared
def test_marked() -> None:
    assert read_stream(RECORDED / "anthropic_tool_use.sse")
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The suite's files at ``tmp_path/clone`` (``tmp_path/shared`` is its ``../shared``)."""
    root = tmp_path / "clone"
    ignore = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc")
    shutil.copytree(REPO / "tests", root / "tests", ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", root)
    return root


def _pytest(root: Path, *args: str, hidden: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.pop(VARIABLE, None)
    if hidden:
        env[VARIABLE] = "none"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-rfs"]
    return subprocess.run(
        [*command, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _stand_in(clone: Path) -> None:
    recorded = clone.parent / "shared" / "fixtures"
    recorded.mkdir(parents=True)
    (recorded / "anthropic_tool_use.sse").write_bytes(b"event: ping\ndata: {}\n\n")


def test_fake_server_tests_skip_before_their_server_starts(clone: Path) -> None:
    # These read a recording inside a fake server's handler: a skip raised there once
    # hung the client until its timeout and failed the run.
    done = _pytest(clone, "tests/backends/test_wire.py")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "skipped" in done.stdout
    assert "../shared is absent" in done.stdout


def test_a_test_reading_shared_without_the_marker_fails_even_where_it_is_present(
    clone: Path,
) -> None:
    _stand_in(clone)
    (clone / "tests" / "decode" / "test_probe.py").write_text(PROBE, encoding="utf-8")
    done = _pytest(clone, "tests/decode/test_probe.py")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "FAILED tests/decode/test_probe.py::test_unmarked" in done.stdout
    assert "mark the test @needs_shared" in done.stdout
    assert "1 passed" in done.stdout  # the marked one reads the stand-in


def test_the_variable_hides_shared_and_marked_tests_skip_at_collection(clone: Path) -> None:
    _stand_in(clone)
    (clone / "tests" / "decode" / "test_probe.py").write_text(PROBE, encoding="utf-8")
    done = _pytest(clone, "tests/decode/test_probe.py", "-m", "shared", hidden=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 skipped, 1 deselected" in done.stdout


def test_a_test_reading_shared_outside_the_bare_directories_stops_the_run(clone: Path) -> None:
    # `make test-bare` collects only the directories in tests/conftest.py's BARE: a test
    # reading ../shared elsewhere would never be checked without it, so it is refused.
    _stand_in(clone)
    (clone / "tests" / "proxy" / "test_probe.py").write_text(PROBE, encoding="utf-8")
    done = _pytest(clone, "tests/proxy/test_probe.py")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-3000:]
    assert "tests/proxy is not in BARE" in done.stderr

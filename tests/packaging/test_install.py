"""The package as a user gets it: the wheel and sdist ``uv build`` makes carry the metadata,
the README and the bundled samples; ``uv tool install`` and ``pipx install`` install the
wheel into tool directories of their own, offline, and the installed ``toolwire`` prints
its version, replays the demo, and passes the ACP registry's auth check.

The dependencies come from the test's own environment: a wheelhouse repacked from it
(``tests/packaging/wheelhouse.py``), given as ``--no-index --find-links``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.packaging.wheelhouse import wheelhouse
from tests.registry_check import auth_check
from toolwire import __version__

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BIN = Path(sys.executable).parent
UV = shutil.which("uv") or shutil.which("uv", path=str(BIN))
PIPX = shutil.which("pipx") or shutil.which("pipx", path=str(BIN))
#: The interpreter the test environment runs on (the tools get a venv of their own on it).
PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
#: What a user's checkout of the samples looks like inside the package.
SAMPLES = (
    "toolwire/samples/demo_session.jsonl",
    "toolwire/samples/anthropic_edit.sse",
    "toolwire/samples/demo_project/textkit/slugify.py",
    "toolwire/samples/demo_project/tests/test_slugify.py",
)
needs_uv = pytest.mark.skipif(UV is None, reason="uv is not installed (make install brings it)")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The wheel, the sdist, and a wheelhouse of the dependencies."""
    if UV is None:
        pytest.skip("uv is not installed (make install brings it)")
    out = tmp_path_factory.mktemp("dist")
    command = [str(UV), "build", "--offline", "--out-dir", str(out), str(REPO)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 and "network was disabled" in done.stderr:
        pytest.skip("uv has no cached build backend to build offline (make install fills it)")
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel], [sdist] = out.glob("toolwire-*.whl"), out.glob("toolwire-*.tar.gz")
    return wheel, sdist, wheelhouse("toolwire", tmp_path_factory.mktemp("wheelhouse"))


def _user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no key, a HOME of its own, no project venv on PATH."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN)
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": path, "HOME": str(home), **extra}


def _runs_as_a_user_would(script: Path, env: dict[str, str]) -> None:
    """``toolwire --version``, the demo, and the registry's auth check."""
    assert script.is_file(), f"{script} was not installed"
    version = subprocess.run([script, "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == f"toolwire {__version__}"
    demo = subprocess.run(
        [script, "demo", "--speed", "0", "--plain"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=env["HOME"],
    )
    assert demo.returncode == 0, demo.stdout[-1500:] + demo.stderr[-1500:]
    assert "tests pass afterwards" in demo.stdout
    assert any(m["id"] == "env" for m in auth_check([str(script), "acp"]))


@needs_uv
def test_the_wheel_and_sdist_carry_metadata_readme_and_samples(
    built: tuple[Path, Path, Path],
) -> None:
    wheel, sdist, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = Parser().parsestr(
            archive.read(f"toolwire-{__version__}.dist-info/METADATA").decode()
        )
    for field in ("Summary", "License-Expression", "Requires-Python", "Project-URL"):
        assert meta[field], field
    assert len(meta.get_all("Classifier") or []) >= 5
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = meta.get_payload()
    assert isinstance(readme, str)
    assert readme.index("uv tool install toolwire") < readme.index("From source")
    assert not re.findall(r"\]\((?!https?://)[^)]*\)", readme)  # no link only a clone resolves
    assert set(SAMPLES) <= names
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"README.md", "LICENSE", "pyproject.toml", *(f"src/{s}" for s in SAMPLES)} <= members


@needs_uv
def test_uv_tool_install_from_the_wheel_offline(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    wheel, _, deps = built
    env = _user_env(
        tmp_path / "home",
        UV_TOOL_DIR=str(tmp_path / "tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
        UV_CACHE_DIR=str(tmp_path / "cache"),
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
    )
    command = [str(UV), "tool", "install", "--offline", "--no-index", "--find-links", str(deps)]
    done = subprocess.run(
        [*command, "--python", str(PYTHON), str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    _runs_as_a_user_would(tmp_path / "bin" / "toolwire", env)


@pytest.mark.skipif(PIPX is None, reason="pipx is not installed (make install brings it)")
@needs_uv
def test_pipx_install_from_the_wheel_offline(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    wheel, _, deps = built
    env = _user_env(
        tmp_path / "home",
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        # Whichever installer pipx runs (pip, or uv when it finds one) stays offline.
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(deps),
        UV_OFFLINE="1",
        UV_NO_CONFIG="1",
    )
    pip_args = f"--no-index --find-links {deps}"
    done = subprocess.run(
        [str(PIPX), "install", "--python", str(PYTHON), "--pip-args", pip_args, str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    _runs_as_a_user_would(tmp_path / "bin" / "toolwire", env)

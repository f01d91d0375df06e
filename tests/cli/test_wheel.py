"""``uvx toolwire acp`` / ``pipx run``: the built wheel alone runs the agent.

The wheel is built from the checkout (``uv build``, else ``python -m build``, else
``pip wheel``) and installed into a fresh virtual environment; its dependencies come from
the test's own environment (read through ``PYTHONPATH``, which loads no ``.pth`` file, so
the checkout's editable install is out of reach). Then the ACP registry's check, through
the official SDK client: ``initialize`` offers an ``agent`` auth method, ``authenticate``
succeeds, ``session/new`` answers.
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import ClientCapabilities, Implementation

from tests.agent.support import KEY, ScriptedClient, environment
from tests.helpers import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.anyio]


def _build(out: Path) -> Path:
    """The wheel, built by the first front-end there is (the test skips without one)."""
    uv = shutil.which("uv")
    if uv:
        command = [uv, "build", "--wheel", "--out-dir", str(out), str(REPO)]
    else:
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(REPO)]
        probe = subprocess.run([sys.executable, "-m", "build", "--version"], capture_output=True)
        if probe.returncode == 0:
            command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    wheels = list(out.glob("toolwire-*.whl"))
    if done.returncode != 0 or not wheels:
        pytest.skip(f"no wheel built here ({Path(command[0]).name}): {done.stderr[-200:]}")
    return wheels[0]


def _install(wheel: Path, where: Path) -> Path:
    """A fresh environment with only the wheel installed in it; its ``toolwire`` script."""
    venv.EnvBuilder(with_pip=True).create(where)
    python = where / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    return where / "bin" / "toolwire"


def _imported_from(python: Path, env: dict[str, str]) -> str:
    """Where ``python`` imports toolwire from."""
    code = "import toolwire; print(toolwire.__file__)"
    done = subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True)
    return done.stdout


async def test_the_wheel_alone_serves_the_registry_check(tmp_path: Path) -> None:
    script = _install(_build(tmp_path / "dist"), tmp_path / "env")
    deps = ":".join(site.getsitepackages())
    env = environment(tmp_path, ANTHROPIC_API_KEY=KEY, PYTHONPATH=deps)
    where = _imported_from(script.with_name("python"), env)
    assert where.startswith(str(tmp_path / "env")), where  # not the checkout's sources
    client = ScriptedClient()
    async with spawn_agent_process(client, str(script), "acp", env=env) as (conn, _):  # type: ignore[arg-type]
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="registry-check", version="0"),
        )
        kinds = [m.model_dump(by_alias=True).get("type", "agent") for m in init.auth_methods or ()]
        assert "agent" in kinds
        await conn.authenticate(method_id=init.auth_methods[0].id)  # type: ignore[index]
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.session_id

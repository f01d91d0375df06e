"""What a command cannot do inside the sandbox, and can with ``mode = "off"``.

Each case runs the same command line through a real ``LocalTerminal``: inside the
sandbox (bubblewrap, the seccomp launcher) it must fail, without one it must succeed;
and the same from a background command and from a grandchild of the command.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sandbox.support import needs_bwrap
from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox import Sandbox
from toolwire.tools import LocalTerminal

pytestmark = [needs_bwrap, pytest.mark.e2e]
DONE = "CASE-PASSED"


@dataclass
class World:
    """The places a case reaches for: a project, a home, a server and a host socket."""

    base: Path
    port: int
    unix_socket: Path

    @property
    def project(self) -> Path:
        return self.base / "project"

    @property
    def home(self) -> Path:
        return self.base / "home"


@pytest.fixture
def world(base: Path) -> Iterator[World]:
    """A TCP server on 127.0.0.1 and a Unix socket of the host, both answering."""
    tcp = socket.create_server(("127.0.0.1", 0))
    path = base / "project" / "host.sock"  # in the project: only seccomp stands between
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(path))
    unix.listen()
    stop = threading.Event()

    def serve(server: socket.socket) -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            conn.close()

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in (tcp, unix)]
    for thread in threads:
        thread.start()
    (base / "project" / ".git" / "hooks").mkdir(parents=True)
    (base / "project" / "escape").symlink_to(base / "outside")
    (base / "project" / "secrets").mkdir()
    (base / "project" / "secrets" / "key").write_text("the-secret\n")
    yield World(base, tcp.getsockname()[1], path)
    stop.set()
    for thread in threads:
        thread.join()
    tcp.close()
    unix.close()


CONNECT_UNIX = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])"
CASES: dict[str, Callable[[World], str]] = {
    "write ~/.bashrc": lambda w: 'echo "alias x=y" >> "$HOME/.bashrc"',
    "write through a symlink outside": lambda w: "echo x > escape/file",
    "read a deny_read file": lambda w: "cat secrets/key",
    "write .git/hooks/pre-commit": lambda w: "echo x > .git/hooks/pre-commit",
    "connect to 127.0.0.1": lambda w: f"exec 3<>/dev/tcp/127.0.0.1/{w.port}",
    "unshare -U": lambda w: "unshare -U true",
    "connect to a host Unix socket": lambda w: (
        f"{shlex.quote(sys.executable)} -c {shlex.quote(CONNECT_UNIX)} {w.unix_socket}"
    ),
}


def terminal(w: World, *, sandboxed: bool) -> LocalTerminal:
    config = SandboxConfig(deny_read=[str(w.project / "secrets")])
    env = {"HOME": str(w.home), "XDG_DATA_HOME": str(w.base / "data")}
    sandbox = Sandbox(config, [w.project], "bwrap", environ=env) if sandboxed else None
    return LocalTerminal(extra_env={"HOME": str(w.home)}, sandbox=sandbox)


async def outcome(w: World, command: str, how: str, *, sandboxed: bool) -> str:
    """The output of ``command && echo DONE``, run directly, in the background, or as a
    grandchild."""
    line = f"{command} && echo {DONE}"
    term = terminal(w, sandboxed=sandboxed)
    try:
        if how == "grandchild":
            line = f"bash -c {shlex.quote(f'bash -c {shlex.quote(line)}')}"
        if how != "background":
            return (await term.run(line, cwd=w.project, timeout=30)).output
        job = await term.start_background(f"{line}; echo EXITED", cwd=w.project)
        assert job.log_path is not None
        log = Path(job.log_path)
        for _ in range(300):
            if "EXITED" in log.read_text():
                return log.read_text()
            await asyncio.sleep(0.05)
        raise AssertionError("the background command did not end")
    finally:
        await term.aclose()


@pytest.mark.parametrize("how", ["direct", "background", "grandchild"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.anyio
async def test_refused_inside_and_allowed_with_the_sandbox_off(
    world: World, case: str, how: str
) -> None:
    command = CASES[case](world)
    inside = await outcome(world, command, how, sandboxed=True)
    assert DONE not in inside, inside
    outside = await outcome(world, command, how, sandboxed=False)
    assert DONE in outside, outside


@pytest.mark.anyio
async def test_the_project_and_a_private_temp_are_writable(world: World) -> None:
    command = "echo made > made.txt && echo t > /tmp/t && cat /tmp/t made.txt && echo $$"
    result = await terminal(world, sandboxed=True).run(command, cwd=world.project, timeout=30)
    assert result.exit_code == 0, result.output
    assert (world.project / "made.txt").read_text() == "made\n"
    # A new PID namespace: the command's shell is not a process of the host.
    assert int(result.output.split()[-1]) < 10

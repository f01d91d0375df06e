"""The kernel-level ways out of the sandbox, tried as an attacker would, each with a small
C probe (``escape.c``) run inside: under bubblewrap and under the Landlock fallback, as
root and as an ordinary user (``escapes.py``). A probe prints ALLOWED when the kernel let
it through; each case also checks, from the host, that nothing changed."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sandbox.escapes import (
    Runner,
    argv_for,
    compile_probe,
    mechanism_missing,
    run,
    runners,
    scratch_dir,
)
from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import landlock_abi
from toolwire.sandbox.wrap import LAUNCHER, Layout, launcher_argv

pytestmark = pytest.mark.e2e
BWRAP = ["bwrap-root", "bwrap-user"]
EVERY = [*BWRAP, "landlock-root", "landlock-user"]
SECRET = "the-private-key"


@dataclass
class Kit:
    """Decided once: the probe, who runs it, and what each pairing cannot do here."""

    scratch: Path
    probe: Path | str
    runners: dict[str, Runner]
    missing: dict[str, str]


@pytest.fixture(scope="session")
def kit() -> Iterator[Kit]:
    scratch = scratch_dir()
    probe = compile_probe(scratch)
    people = runners(scratch)
    missing = {}
    for how in EVERY:
        mechanism, who = how.split("-")
        runner = people[who]
        missing[how] = runner.skip or mechanism_missing(mechanism, runner, scratch)
    yield Kit(scratch, probe, people, missing)
    shutil.rmtree(scratch, ignore_errors=True)


@dataclass
class Box:
    """One test's sandbox: a project, a home and an outside, all the runner's own."""

    mechanism: str
    runner: Runner
    probe: str
    base: Path

    @property
    def project(self) -> Path:
        return self.base / "project"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def outside(self) -> Path:
        return self.base / "outside" / "file"

    def sh(self, line: str, config: SandboxConfig | None = None, bridge: Path | None = None) -> str:
        """``sh -c LINE`` in the sandbox; ``$E`` is the probe."""
        command = ["sh", "-c", f"E={self.probe}; {line}"]
        argv = argv_for(
            self.mechanism,
            self.runner,
            command,
            project=self.project,
            home=self.home,
            config=config,
            bridge=bridge,
        )
        return run(argv, self.project)


def _box(kit: Kit, how: str) -> Iterator[Box]:
    if isinstance(kit.probe, str):
        pytest.skip(kit.probe)
    if kit.missing[how]:
        pytest.skip(kit.missing[how])
    mechanism, who = how.split("-")
    base = Path(kit.scratch / how)
    shutil.rmtree(base, ignore_errors=True)
    for name in ("project/.git", "home/.ssh", "outside"):
        (base / name).mkdir(parents=True)
    base.chmod(0o755)
    (base / "project" / ".git" / "config").write_text("[core]\n")
    (base / "home" / ".ssh" / "id_rsa").write_text(SECRET)
    (base / "outside" / "file").write_text("untouched\n")
    runner = kit.runners[who]
    runner.own(base)
    yield Box(mechanism, runner, str(kit.probe), base)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=EVERY)
def box(kit: Kit, request: pytest.FixtureRequest) -> Iterator[Box]:
    yield from _box(kit, request.param)


@pytest.fixture(params=BWRAP)
def bwrap_box(kit: Kit, request: pytest.FixtureRequest) -> Iterator[Box]:
    yield from _box(kit, request.param)


@pytest.mark.parametrize("probe", ["socket64", "clone64"])
def test_argument_rules_read_only_the_bits_the_kernel_reads(box: Box, probe: str) -> None:
    # socket()'s family is an int: (1 << 32) | AF_UNIX is AF_UNIX to the kernel.
    out = box.sh(f"$E {probe}")
    assert f"REFUSED {probe}" in out, out


def test_no_datagram_reaches_a_host_socket(box: Box) -> None:
    """socketpair(AF_UNIX, SOCK_DGRAM) makes a Unix socket without socket(AF_UNIX), and a
    datagram socket sends to any path (a logger's, a notify socket's)."""
    path = box.base / "host.sock"
    host = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    host.bind(str(path))
    host.settimeout(0)
    box.runner.own(path)
    try:
        out = box.sh(f"$E dgram {path}")
        with pytest.raises(BlockingIOError):
            host.recv(64)
    finally:
        host.close()
    assert "REFUSED dgram" in out, out
    # A connected stream pair stays (asyncio's event loop makes one).
    assert "PAIRED" in box.sh("python3 -c 'import socket; socket.socketpair()' && echo PAIRED")


@pytest.mark.parametrize("probe", ["io_uring", "keyring", "vsock"])
def test_io_uring_the_key_rings_and_vsock_are_refused(box: Box, probe: str) -> None:
    # IORING_OP_SOCKET makes sockets without socket(2), past the filter's family rule;
    # the user's key ring is shared by every process of the user; a virtual machine's
    # vsock reaches its host whatever the network namespace.
    out = box.sh(f"$E {probe}")
    assert f"REFUSED {probe}" in out, out
    if probe == "vsock":  # the filter's answer, not a kernel without vsock
        assert "Operation not permitted" in out, out


def test_no_setuid_or_setgid_bit(box: Box) -> None:
    tool = box.project / "tool"
    tool.write_text("#!/bin/sh\n")
    box.runner.own(tool)
    out = box.sh(f"$E setuid {tool}; chmod g+s {tool}; chmod +x {tool} && echo X-OK")
    assert "REFUSED setuid" in out, out
    assert tool.stat().st_mode & 0o6000 == 0
    assert "X-OK" in out  # the permission bits a project needs stay the command's own


@pytest.mark.parametrize("network", ["none", "list"])
def test_no_unfiltered_process_in_reach(bwrap_box: Box, network: str) -> None:
    """bubblewrap's init and the proxy bridge run without the filter: the command must
    not be able to drive them (ptrace, process_vm_writev, /proc/PID/mem, pidfd_getfd)."""
    bridge = None
    host = None
    if network == "list":
        bridge = bwrap_box.base / "proxy.sock"
        host = socket.socket(socket.AF_UNIX)
        host.bind(str(bridge))
        bwrap_box.runner.own(bridge)
    config = SandboxConfig(deny_read=[], network=["pypi.org"] if bridge else "none")
    try:
        out = bwrap_box.sh("$E reach", config=config, bridge=bridge)
    finally:
        if host is not None:
            host.close()
    assert "REACHED" not in out, out
    assert "REFUSED reach" in out, out
    if bridge is not None:  # the bridge is there, and out of reach
        assert "TARGETS 0" not in out, out


def test_no_host_process_in_reach_under_landlock(box: Box) -> None:
    """Under Landlock alone the host's processes are visible: a process of the same user
    must be neither driven nor signalled (it could be the agent, or the editor)."""
    if box.mechanism != "landlock":
        pytest.skip("under bubblewrap no host process is visible")
    victim = subprocess.Popen([*box.runner.prefix, "sleep", "60"])
    try:
        out = box.sh(f"$E reach {victim.pid}; kill -0 {victim.pid} && echo SIGNALLED")
    finally:
        victim.kill()
        victim.wait()
    assert "TARGETS 1" in out, out
    assert "REACHED" not in out, out
    if landlock_abi() >= 6:  # signals are scoped from ABI 6 on
        assert "SIGNALLED" not in out, out


def test_the_command_holds_no_capability(box: Box) -> None:
    out = box.sh("$E caps")
    sets = dict(line.split(":\t") for line in out.splitlines() if ":\t" in line)
    for name in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(sets[name], 16) == 0, out
    assert sets["NoNewPrivs"] == "1", out
    # The bounding set too where it can be dropped (an ordinary user cannot, and with
    # no_new_privs and nothing permitted an exec gains nothing from it).
    if box.mechanism == "bwrap" or box.runner.who == "root":
        assert int(sets["CapBnd"], 16) == 0, out


UNDO = {
    "umount the deny_read cover": "$E umount {home}/.ssh; cat {home}/.ssh/id_rsa",
    "umount the read-only .git/config": "$E umount {project}/.git/config; "
    "$E write {project}/.git/config",
    "remount / read-write": "$E remount-rw /; $E remount-rw {outside_dir}; $E write {outside}",
    "umount /proc": "$E umount /proc; ls /proc | grep -c '^[0-9]' > {project}/pids",
    "write /proc/sys": "$E umount /proc/sys; $E write /proc/sys/kernel/hostname",
}


@pytest.mark.parametrize("case", list(UNDO))
def test_nothing_mounted_can_be_undone(bwrap_box: Box, case: str) -> None:
    """As root, the command held every capability in its namespaces: it could unmount
    what hides and protects, and remount what is read-only."""
    box = bwrap_box
    line = UNDO[case].format(
        home=box.home, project=box.project, outside=box.outside, outside_dir=box.outside.parent
    )
    out = box.sh(line, config=SandboxConfig(deny_read=[str(box.home / ".ssh")]))
    assert "ALLOWED" not in out, out
    assert SECRET not in out
    assert (box.project / ".git" / "config").read_text() == "[core]\n"
    assert box.outside.read_text() == "untouched\n"
    if case == "umount /proc":
        assert int((box.project / "pids").read_text()) < 10  # its own processes only


def test_truncate_outside_the_writable_roots(box: Box) -> None:
    out = box.sh(f"$E truncate {box.outside}")
    assert "REFUSED truncate" in out, out
    assert box.outside.read_text() == "untouched\n"


def test_a_file_moves_between_directories_of_the_project(box: Box) -> None:
    # Landlock's first ABI refuses every rename across directories, even inside a root.
    line = "mkdir a b && echo x > a/f && $E rename a/f b/f"
    out = box.sh(line)
    assert "ALLOWED rename" in out, out
    assert (box.project / "b" / "f").read_text() == "x\n"


def test_the_launcher_refuses_a_command_that_would_keep_a_capability(kit: Kit) -> None:
    """The last check before ``exec``: were the drop ever to leave a capability (a kernel
    or a change that keeps one), the command does not run at all."""
    if os.geteuid() != 0:
        pytest.skip("only root holds a capability to keep")
    marker = kit.scratch / "ran"
    keep = (
        "import runpy, sys; launch = runpy.run_path(sys.argv[1]); "
        "launch['drop_capabilities'].__globals__['drop_capabilities'] = lambda: None; "
        "launch['main'](sys.argv[2:])"
    )
    launcher = Layout(
        (), Path("/"), launcher=(sys.executable, "-I", "-S", "-c", keep, str(LAUNCHER))
    )
    argv = launcher_argv(launcher, ["touch", str(marker)], landlock=None)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode != 0
    assert "would still hold capabilities (CapPrm" in done.stderr, done.stderr
    assert not marker.exists()

"""What the escape tests share: the probe program, and who runs the sandbox.

Every escape test runs under each mechanism (bubblewrap, the Landlock fallback) and as
each kind of user: root (CI and containers run the agent as root) and an ordinary user.
Run as root, the suite makes the ordinary user itself (``toolwire-sbx``, a system user
without a home, made once) and runs that pass through ``setpriv``; run as an ordinary
user, the root pass skips. Whether each pairing can run is decided once per session,
by a trial of the launcher, before any test starts anything.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import landlock_abi
from toolwire.sandbox.wrap import LAUNCHER, Layout, bwrap_argv, landlock_argv, launcher_argv

USER = "toolwire-sbx"
SOURCE = Path(__file__).with_name("escape.c")
TIMEOUT_S = 30


@dataclass(frozen=True)
class Runner:
    """Who runs the sandbox: ``prefix`` before its command line, and the launcher (a copy
    the ordinary user can read when the project lives where only root can)."""

    who: str
    prefix: tuple[str, ...] = ()
    launcher: tuple[str, ...] = field(default=(sys.executable, "-I", str(LAUNCHER)))
    uid: int = -1
    gid: int = -1
    skip: str = ""

    def own(self, *paths: Path) -> None:
        """Make ``paths`` (recursively) this user's, as a user's project is."""
        if self.uid < 0:
            return
        for path in paths:
            os.chown(path, self.uid, self.gid)
            for where, dirs, files in os.walk(path):
                for name in (*dirs, *files):
                    os.chown(os.path.join(where, name), self.uid, self.gid)


def compile_probe(into: Path) -> Path | str:
    """The probe, built in ``into``; or why it cannot be."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        return "no C compiler (gcc) to build the escape probes"
    binary = into / "escape"
    done = subprocess.run([gcc, "-O1", "-o", str(binary), str(SOURCE)], capture_output=True)
    if done.returncode != 0:
        return f"the escape probe does not compile: {done.stderr.decode()[-300:]}"
    binary.chmod(0o755)
    return binary


def argv_for(
    mechanism: str,
    runner: Runner,
    command: Sequence[str],
    *,
    project: Path,
    home: Path = Path("/nonexistent"),
    config: SandboxConfig | None = None,
    bridge: Path | None = None,
) -> list[str]:
    """``command`` in the sandbox of ``project``, as ``runner`` starts it."""
    config = config or SandboxConfig(deny_read=[])
    layout = Layout(roots=(project,), home=home, bridge=bridge, launcher=runner.launcher)
    if runner.uid >= 0:  # bubblewrap is started by that user, not by this process
        layout = replace(layout, user=(runner.uid, runner.gid))
    if mechanism == "bwrap":
        inner = bwrap_argv(config, layout, command, project)
    else:
        inner = landlock_argv(config, layout, command)
    return [*runner.prefix, *inner]


def run(argv: Sequence[str], cwd: Path) -> str:
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    return done.stdout + done.stderr


def _user_runner(scratch: Path) -> Runner:
    """The ordinary user of a root run: made when missing; the launcher (standard library
    only) copied where that user can read it, run by a Python it can run."""
    try:
        entry = pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            capture_output=True,
            check=False,
        )
        time.sleep(0.5 if made.returncode else 0)  # another test worker may be making it
        try:
            entry = pwd.getpwnam(USER)
        except KeyError:
            why = made.stderr.decode().strip()
            return Runner("user", skip=f"cannot make the user {USER} (`make deps`): {why}")
    copy = scratch / "launcher"
    copy.mkdir(mode=0o755)
    shutil.copy(LAUNCHER, copy / "launch.py")
    uid = entry.pw_uid
    prefix = ("setpriv", f"--reuid={uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--")
    # The system's Python first: the project's may live where only root can look.
    for python in ("/usr/bin/python3", sys.executable):
        launcher = (python, "-I", "-S", str(copy / "launch.py"))
        trial = [
            *prefix,
            *launcher_argv(Layout((), Path("/"), launcher=launcher), ["true"], landlock=None),
        ]
        if subprocess.run(trial, capture_output=True, check=False).returncode == 0:
            return Runner("user", prefix, launcher, uid, entry.pw_gid)
    return Runner("user", skip=f"{USER} can run no Python with the launcher")


def runners(scratch: Path) -> dict[str, Runner]:
    """``root`` and ``user``: the one this process is, and the other where it can be."""
    if os.geteuid() != 0:
        return {
            "root": Runner("root", skip="not root: the root pass runs as root"),
            "user": Runner("user"),
        }
    if shutil.which("setpriv") is None:
        return {"root": Runner("root"), "user": Runner("user", skip="no setpriv (util-linux)")}
    return {"root": Runner("root"), "user": _user_runner(scratch)}


def mechanism_missing(mechanism: str, runner: Runner, scratch: Path) -> str:
    """Why ``runner`` cannot run a sandbox with ``mechanism`` here ("" when it can)."""
    if mechanism == "landlock":
        return "" if landlock_abi() >= 1 else "the kernel has no Landlock"
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH (`make deps` installs it as root)"
    project = scratch / f"trial-{runner.who}"  # the runner's own, as a project is
    project.mkdir(mode=0o755, exist_ok=True)
    runner.own(project)
    trial = argv_for("bwrap", runner, ["true"], project=project)
    done = subprocess.run(trial, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"bwrap cannot start as {runner.who} here: {done.stderr.strip()[-200:]}"
    return ""


def scratch_dir() -> Path:
    """A directory under /var/tmp (the sandbox's /tmp is its own) every user can read."""
    where = Path(tempfile.mkdtemp(prefix="toolwire-escape-", dir="/var/tmp"))
    where.chmod(0o755)
    return where

"""Running ``git`` on a shadow store, and nothing else of the user's.

Every call names the shadow ``--git-dir`` (and, for a directory's files, its
``--work-tree`` and its own index through ``GIT_INDEX_FILE``), so the user's repository
is never opened: its HEAD, index, refs, stash and config are not read or written. The
environment is scrubbed of ``GIT_*`` (a ``GIT_DIR`` or ``GIT_INDEX_FILE`` inherited from a
hook or an editor would point git back at the user's repository), and the system and
global config files are not read, so no filter, ``autocrlf`` or hook of the user's can
change the bytes that are stored or run anything.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from toolwire.checkpoints import lock
from toolwire.errors import ToolwireError

#: Set in every shadow store: bytes in, the same bytes out; no hook, no automatic gc
#: (``prune`` collects; an automatic gc in the middle of a prompt would stall it).
STORE_CONFIG: Mapping[str, str] = {
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.fileMode": "true",
    "core.symlinks": "true",
    "core.hooksPath": os.devnull,
    "core.quotePath": "false",
    "gc.auto": "0",
    "user.name": "toolwire",
    "user.email": "toolwire@localhost",
}
#: ``info/attributes`` of a shadow store: it outranks every ``.gitattributes`` of the
#: directory, so ``text=auto``, ``eol`` or an LFS filter there cannot convert a file.
ATTRIBUTES = "* -text -filter -ident -working-tree-encoding\n"


class CheckpointError(ToolwireError):
    """A checkpoint could not be taken, read or restored; the message says why."""


def unavailable() -> str | None:
    """Why checkpoints cannot work on this machine (one line), or None when they can."""
    if shutil.which("git") is None:
        return "checkpoints are off: git was not found on PATH"
    return None


def clean_env(index: Path | None = None) -> dict[str, str]:
    """The environment git runs in: the caller's without ``GIT_*``, no system or global
    config, C messages; ``index`` as the index when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    env["GIT_TERMINAL_PROMPT"] = "0"
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


def run(
    store: Path,
    args: Sequence[str],
    *,
    work_tree: Path | None = None,
    index: Path | None = None,
    stdin: bytes = b"",
) -> bytes:
    """``git ARGS`` on the shadow store ``store``; its stdout, or ``CheckpointError``."""
    cmd = ["git", f"--git-dir={store}"]
    if work_tree is not None:
        cmd.append(f"--work-tree={work_tree}")
    cmd.extend(args)
    try:
        with lock.held(store) as fd:  # git's own locks in the store are then stale
            done = _git(cmd, stdin, index, fd)
            stderr = done.stderr.decode(errors="replace")
            stale = lock.stale(store, stderr) if done.returncode else None
            if stale is not None and lock.clear(stale):
                done = _git(cmd, stdin, index, fd)
    except OSError as e:  # TimeoutError: another process holds the store
        raise CheckpointError(f"could not run git: {e}") from e
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise CheckpointError(f"git {args[0]} failed: {detail[-1] if detail else done.returncode}")
    return done.stdout


def _git(
    cmd: list[str], stdin: bytes, index: Path | None, lock_fd: int
) -> subprocess.CompletedProcess[bytes]:
    """Run git to its end, unless it waits to open a named pipe: git opens every
    ``.gitignore`` of the tree, and one that is a FIFO would block it (and the prompt
    waiting for its checkpoint) forever; it is then stopped and the checkpoint fails."""
    # git inherits the store's lock: it stays held while a git outlives a killed agent.
    with subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(index),
        pass_fds=(lock_fd,),
    ) as proc:
        stuck = 0
        data: bytes | None = stdin
        while True:
            try:
                out, err = proc.communicate(data, timeout=0.25)
                return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                data = None  # sent once; a retry must not send it again
                stuck = stuck + 1 if _on_a_fifo(proc.pid) else 0
                if stuck >= 2:
                    proc.kill()
                    proc.communicate()
                    raise CheckpointError(FIFO) from None


FIFO = (
    "git was stopped: it waited to open a named pipe in the tree (a .gitignore that is a "
    "FIFO?); remove it for checkpoints to work"
)


def _on_a_fifo(pid: int) -> bool:
    """Whether process ``pid`` is blocked opening a FIFO (Linux; False elsewhere)."""
    try:
        with open(f"/proc/{pid}/wchan", encoding="ascii") as f:
            return f.read().strip() in ("wait_for_partner", "fifo_open")
    except OSError:
        return False


def global_excludes() -> Path | None:
    """The user's global ignore file (``core.excludesFile``, else git's XDG default),
    read with the user's own config, since the store's runs read none."""
    named = _excludes_setting(os.environ.get("HOME", ""), os.environ.get("XDG_CONFIG_HOME", ""))
    if named:
        path = Path(named).expanduser()
    else:
        base = os.environ.get("XDG_CONFIG_HOME", "")
        root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
        path = root / "git" / "ignore"
    return path if path.is_file() else None


@functools.cache
def _excludes_setting(home: str, config_home: str) -> str:
    """``core.excludesFile`` of the user's global config, once per process and home: the
    agent opens a session's store at every checkpoint, and this is a git process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(
            ["git", "config", "--global", "--path", "--get", "core.excludesFile"],
            capture_output=True,
            env=env,
            check=False,
        )
    except OSError:
        return ""
    return done.stdout.decode(errors="replace").strip()


__all__ = [
    "ATTRIBUTES",
    "STORE_CONFIG",
    "CheckpointError",
    "clean_env",
    "global_excludes",
    "run",
    "unavailable",
]

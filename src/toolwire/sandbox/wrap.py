"""The command line that runs a command inside the sandbox: a pure function of the settings.

``bwrap_argv`` turns ``[tools.sandbox]`` and a session's ``Layout`` into the bubblewrap
command line around ``argv`` (docs/sandbox.md, "What a command sees"); ``landlock_argv``
is the fallback's, the launcher alone. Nothing here starts a process; the only thing
read is whether each path exists, and as what (``Layout.kind``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import filter_spec

Kind = Literal["dir", "file"] | None
#: Re-bound read-only inside every writable directory: what makes a later ``git`` or
#: agent run code (hooks, ``core.fsmonitor``, settings with hooks).
PROTECTED: Final[tuple[str, ...]] = (".git/hooks", ".git/config", ".toolwire", ".claude", ".codex")
#: Read-only in the sandbox's ``/proc``: the kernel's settings and the SysRq trigger.
PROC_READ_ONLY: Final = ("/proc/sys", "/proc/sysrq-trigger")
#: The port of the proxy bridge on the sandbox's own loopback.
BRIDGE_PORT: Final = 3128
LAUNCHER: Final = Path(__file__).with_name("launch.py")


def path_kind(path: Path) -> Kind:
    """``"dir"``, ``"file"`` (anything else that exists) or None."""
    if path.is_dir():
        return "dir"
    return "file" if os.path.lexists(path) else None


@dataclass(frozen=True, slots=True)
class Layout:
    """What the sandbox of one session is built from, besides the settings.

    ``roots``: the session's directories (resolved); ``home``: what ``~`` expands to;
    ``hidden``: toolwire's own data and config directories, hidden whatever the
    settings say; ``bridge``: the host proxy's Unix socket, when the network is a list.
    """

    roots: tuple[Path, ...]
    home: Path
    hidden: tuple[Path, ...] = ()
    bridge: Path | None = None
    launcher: tuple[str, ...] = field(default=(sys.executable, "-I", "-S", str(LAUNCHER)))
    kind: Callable[[Path], Kind] = path_kind


def expand(path: str, home: Path) -> Path:
    """A configured path: ``~`` is ``home``; relative paths are relative to it too."""
    if path == "~" or path.startswith("~/"):
        path = str(home) + path[1:]
    return Path(os.path.realpath(home / path))


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def writable_paths(config: SandboxConfig, layout: Layout) -> list[Path]:
    """What a command may write: the roots and ``writable`` (``workspace-write`` only)."""
    if config.mode != "workspace-write":
        return []
    extra = [expand(p, layout.home) for p in config.writable]
    return list(dict.fromkeys(p for p in (*layout.roots, *extra) if layout.kind(p) == "dir"))


def denied_paths(config: SandboxConfig, layout: Layout) -> list[Path]:
    """What a command must not read: ``deny_read`` and toolwire's own directories, less
    any that would hide a session directory (the command could not run at all)."""
    paths = [expand(p, layout.home) for p in config.deny_read] + list(layout.hidden)
    keep = [p for p in paths if not any(_inside(root, p) for root in layout.roots)]
    return list(dict.fromkeys(p for p in keep if layout.kind(p) is not None))


def proxy_env(port: int = BRIDGE_PORT) -> dict[str, str]:
    """The variables that send a command's HTTP(S) through the bridge (both cases:
    curl reads only the lower-case ``http_proxy``)."""
    url = f"http://127.0.0.1:{port}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    return {n: url for n in names} | {n.lower(): url for n in names} | {"NO_PROXY": ""}


def launcher_argv(layout: Layout, argv: Sequence[str], *, landlock: list[str] | None) -> list[str]:
    """The launcher (``launch.py``) in front of ``argv``."""
    bridge = [str(layout.bridge), BRIDGE_PORT] if layout.bridge is not None else None
    fields = {"bridge": bridge, "landlock": landlock, "seccomp": filter_spec()}
    spec = json.dumps(fields, separators=(",", ":"))
    return [*layout.launcher, spec, "--", *argv]


def bwrap_argv(config: SandboxConfig, layout: Layout, argv: Sequence[str], cwd: Path) -> list[str]:
    """``argv`` run in ``cwd`` inside bubblewrap, as ``config`` says (module doc)."""
    args = ["bwrap", "--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid"]
    args += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    # No capability, even for root; no unfiltered bwrap init beside the command (the
    # launcher is PID 1, and then the command).
    args += ["--cap-drop", "ALL", "--as-pid-1"]
    if config.network != "full":
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for knob in PROC_READ_ONLY:  # root writes these by file mode alone, with no capability
        if layout.kind(Path(knob)) is not None:
            args += ["--ro-bind", knob, knob]
    writable = writable_paths(config, layout)
    for path in writable:
        args += ["--bind", str(path), str(path)]
    for path in writable:
        for name in PROTECTED:
            inner = path / name
            if layout.kind(inner) is not None:
                args += ["--ro-bind", str(inner), str(inner)]
    for path in denied_paths(config, layout):
        if layout.kind(path) == "dir":
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    if layout.bridge is not None:
        args += ["--bind", str(layout.bridge), str(layout.bridge)]
        for name, value in proxy_env().items():
            args += ["--setenv", name, value]
    args += ["--chdir", str(cwd), "--", *launcher_argv(layout, argv, landlock=None)]
    return args


def landlock_argv(config: SandboxConfig, layout: Layout, argv: Sequence[str]) -> list[str]:
    """The fallback without user namespaces: the launcher restricts writes with Landlock
    (the roots, ``writable`` and the temp directory) and loads the same filter. Reads and
    the network are not confined there (docs/sandbox.md)."""
    allowed = [*map(str, writable_paths(config, layout)), "/tmp", "/dev"]
    return launcher_argv(layout, argv, landlock=allowed)


__all__ = [
    "BRIDGE_PORT",
    "LAUNCHER",
    "PROTECTED",
    "Kind",
    "Layout",
    "bwrap_argv",
    "denied_paths",
    "expand",
    "landlock_argv",
    "launcher_argv",
    "path_kind",
    "proxy_env",
    "writable_paths",
]

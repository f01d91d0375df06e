"""The command line that runs a command inside the sandbox: a pure function of the settings.

``bwrap_argv`` turns ``[tools.sandbox]`` and a session's ``Layout`` into the bubblewrap
command line around ``argv`` (docs/sandbox.md, "What a command sees"); ``landlock_argv``
is the fallback's, the launcher alone. Nothing here starts a process; what is read is
whether each path exists, and as what (``Layout.kind``), and where a repository's
``.git`` file and ``commondir`` point.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import py_compile
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from toolwire.config.sandbox import SandboxConfig
from toolwire.sandbox.launch import filter_spec
from toolwire.secrets import KEY_PREFIXED

Kind = Literal["dir", "file", "link"] | None
#: Re-bound read-only inside every writable directory: what another program later reads
#: and runs on its own. The whole ``.git`` (its config, hooks, ``commondir``: where git
#: reads code from), an agent's settings, a shell's start-up files, an editor's tasks.
PROTECTED: Final[tuple[str, ...]] = (
    ".git",
    ".toolwire",
    ".claude",
    ".codex",
    ".envrc",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".gitmodules",
    ".mcp.json",
    ".vscode",
    ".idea",
)
#: Environment variables whose names say they hold a secret: a sandboxed command does
#: not get them unless ``pass_env`` lists them (the launcher drops them, so a client
#: terminal's environment loses them too). Case-insensitive: a name equal to one of
#: ``exact``, holding one of ``parts``, ending in one of ``suffixes`` (after something),
#: or one of ``words`` alone or after ``_`` (``API_KEY``, ``GITHUB_TOKEN``, ``AUTH``).
#: Data, not a pattern: the launcher matches it without importing ``re``.
SECRET_NAMES: Final[dict[str, list[str]]] = {
    "exact": ["SSH_AUTH_SOCK"],
    "parts": ["PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "_TOKEN_"],
    "suffixes": ["_PWD"],
    "words": ["KEY", "APIKEY", "TOKEN", "CREDENTIAL", "CREDENTIALS", "AUTH"],
}
#: Values that are secrets whatever the name: the key shapes ``toolwire.secrets`` knows,
#: and a URL with a password in it.
SECRET_VALUE: Final = rf"{KEY_PREFIXED.pattern}|[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/@:]*:[^\s/@]+@"
#: What a value must hold for ``SECRET_VALUE`` to match it: the launcher reads a value
#: with ``re`` (milliseconds to import) only when it holds one of these.
SECRET_MARKS: Final = ("sk-", "gh", "glpat-", "xox", "AIza", "AKIA", "ASIA", "://")
#: Read-only in the sandbox's ``/proc``: the kernel's settings and the SysRq trigger.
PROC_READ_ONLY: Final = ("/proc/sys", "/proc/sysrq-trigger")
#: The port of the proxy bridge on the sandbox's own loopback.
BRIDGE_PORT: Final = 3128
LAUNCHER: Final = Path(__file__).with_name("launch.py")


def path_kind(path: Path) -> Kind:
    """``"link"`` (a symbolic link), ``"dir"``, ``"file"`` (anything else that exists)
    or None."""
    if path.is_symlink():
        return "link"
    if path.is_dir():
        return "dir"
    return "file" if os.path.lexists(path) else None


@functools.cache
def launcher_command() -> tuple[str, ...]:
    """How a sandboxed command's launcher starts: this interpreter, isolated, on the
    launcher's bytecode (compiled here once, beside it, when it is missing or stale and
    the directory is writable), else on its source. A script is compiled at every run;
    its bytecode saves every command about 2 ms (bench/sandbox.py)."""
    compiled = importlib.util.cache_from_source(str(LAUNCHER))
    if not _fresh(compiled):
        py_compile.compile(str(LAUNCHER), cfile=compiled, doraise=False, quiet=2)
    return (sys.executable, "-I", "-S", compiled if _fresh(compiled) else str(LAUNCHER))


def _fresh(compiled: str) -> bool:
    try:
        return os.stat(compiled).st_mtime >= os.stat(LAUNCHER).st_mtime
    except OSError:
        return False


def _running_user() -> tuple[int, int] | None:
    return None if os.geteuid() == 0 else (os.getuid(), os.getgid())


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
    launcher: tuple[str, ...] = field(default_factory=lambda: launcher_command())
    kind: Callable[[Path], Kind] = path_kind
    #: Who runs bubblewrap, when it is not root: ``(uid, gid)``. Such a user gets the right
    #: to pin links only as root of the sandbox's user namespace, so the launcher pins,
    #: then becomes this user again (``launch.become``); None for root.
    user: tuple[int, int] | None = field(default_factory=_running_user)


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


def launcher_argv(
    layout: Layout,
    argv: Sequence[str],
    *,
    landlock: list[str] | None,
    pins: Sequence[str] = (),
    user: tuple[int, int] | None = None,
    pass_env: Sequence[str] = (),
) -> list[str]:
    """The launcher (``launch.py``) in front of ``argv``."""
    bridge = [str(layout.bridge), BRIDGE_PORT] if layout.bridge is not None else None
    secrets = {"names": SECRET_NAMES, "values": SECRET_VALUE, "marks": SECRET_MARKS}
    spec = {
        "bridge": bridge,
        "landlock": landlock,
        "seccomp": filter_spec(),
        "pin": list(pins),
        "user": list(user) if user is not None else None,
        "secrets": secrets | {"keep": list(pass_env)},
    }
    return [*layout.launcher, json.dumps(spec, separators=(",", ":")), "--", *argv]


def _gitdirs(dot_git: Path, layout: Layout) -> list[Path]:
    """Where git reads a repository's config and hooks through ``dot_git``: the directory
    a ``gitdir:`` file names, and the ``commondir`` of either (a linked worktree)."""
    found = [dot_git]
    if layout.kind(dot_git) == "file":
        try:
            line = dot_git.read_text(errors="replace").strip()
        except OSError:
            return found
        if line.startswith("gitdir:"):
            found.append(Path(os.path.realpath(dot_git.parent / line[7:].strip())))
    try:
        common = (found[-1] / "commondir").read_text(errors="replace").strip()
    except OSError:
        return found
    if common:
        found.append(Path(os.path.realpath(found[-1] / common)))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _linked(root: Path, gitdirs: Sequence[Path], layout: Layout) -> list[Path]:
    """The other ``.git`` entries a ``git`` run in ``root`` reads through: its
    submodules' (``.gitmodules``) and its linked worktrees' (each ``worktrees/*/gitdir``
    of its git directories names one), with where they point."""
    entries = [
        root / line.partition("=")[2].strip() / ".git"
        for line in _read(root / ".gitmodules").splitlines()
        if line.strip().startswith("path") and "=" in line
    ]
    for gitdir in gitdirs:
        try:
            named = [_read(w / "gitdir").strip() for w in (gitdir / "worktrees").iterdir()]
        except OSError:  # none (or unreadable): no linked worktree to protect
            continue
        entries += [Path(n) for n in sorted(named) if os.path.isabs(n)]
    found: list[Path] = []
    for entry in entries:
        if layout.kind(entry) in ("file", "dir"):
            found += _gitdirs(Path(os.path.realpath(entry)), layout)
    return found


def protected(writable: Sequence[Path], layout: Layout) -> tuple[list[Path], list[str]]:
    """What ``PROTECTED`` in each writable directory re-binds read-only (inside a
    writable directory: the rest is read-only already), and the symbolic links among
    them, which the launcher pins in place (a link cannot be a bind's destination: its
    target is bound instead, and the link must not be replaced by a real directory)."""
    binds: list[Path] = []
    pins: list[str] = []
    for root in writable:
        for name in PROTECTED:
            inner = root / name
            kind = layout.kind(inner)
            if kind is None:
                continue
            if kind == "link":
                pins.append(str(inner))
            real = Path(os.path.realpath(inner))
            if layout.kind(real) is not None and name == ".git":
                repo = _gitdirs(real, layout)
                binds += repo + _linked(root, [p for p in repo if p.is_dir()], layout)
            elif layout.kind(real) is not None:
                binds.append(real)
    inside = [p for p in binds if any(_inside(p, w) for w in writable)]
    return list(dict.fromkeys(inside)), pins


def placeholders(writable: Sequence[Path], layout: Layout) -> list[Path]:
    """The session directories' ``.git`` that does not exist (in ``workspace-write``;
    not the ``writable`` extras): an empty read-only one stands there inside the
    sandbox, so a command cannot make a repository there whose config a later ``git``
    on the host (an editor's, in the background) would run. bubblewrap leaves the empty
    directory behind on the host; ``Sandbox.aclose`` removes it (git looks past an
    empty ``.git``, as if there were none)."""
    roots = [root for root in layout.roots if root in writable]
    return [root / ".git" for root in roots if layout.kind(root / ".git") is None]


def _pinning(layout: Layout) -> list[str]:
    """What the launcher's first step needs (``launch.pin``), which it then drops: the
    right to mount; for an ordinary user, also to be root of the namespace that owns the
    mounts, and to become the user again in one of its own (which needs CAP_SETFCAP,
    user_namespaces(7))."""
    if layout.user is None:
        return ["--cap-add", "CAP_SYS_ADMIN"]
    return ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETFCAP", "--uid", "0", "--gid", "0"]


def bwrap_argv(config: SandboxConfig, layout: Layout, argv: Sequence[str], cwd: Path) -> list[str]:
    """``argv`` run in ``cwd`` inside bubblewrap, as ``config`` says (module doc)."""
    args = ["bwrap", "--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid"]
    args += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    # No capability, even for root; no unfiltered bwrap init beside the command (the
    # launcher is PID 1, and then the command).
    args += ["--cap-drop", "ALL", "--as-pid-1"]
    binds, pins = protected(writable_paths(config, layout), layout)
    args += _pinning(layout) if pins else []
    if config.network != "full":
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for knob in PROC_READ_ONLY:  # root writes these by file mode alone, with no capability
        if layout.kind(Path(knob)) is not None:
            args += ["--ro-bind", knob, knob]
    writable = writable_paths(config, layout)
    for path in writable:
        args += ["--bind", str(path), str(path)]
    for path in binds:
        args += ["--ro-bind", str(path), str(path)]
    for path in placeholders(writable, layout):
        args += ["--tmpfs", str(path), "--remount-ro", str(path)]
    for path in denied_paths(config, layout):
        if layout.kind(path) == "dir":
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    if layout.bridge is not None:
        args += ["--bind", str(layout.bridge), str(layout.bridge)]
        for name, value in proxy_env().items():
            args += ["--setenv", name, value]
    args += ["--chdir", str(cwd), "--"]
    user = layout.user if pins else None
    return args + launcher_argv(
        layout, argv, landlock=None, pins=pins, user=user, pass_env=config.pass_env
    )


def landlock_argv(config: SandboxConfig, layout: Layout, argv: Sequence[str]) -> list[str]:
    """The fallback without user namespaces: the launcher restricts writes with Landlock
    (the roots, ``writable`` and the temp directory) and loads the same filter. Reads and
    the network are not confined there (docs/sandbox.md)."""
    allowed = [*map(str, writable_paths(config, layout)), "/tmp", "/dev"]
    return launcher_argv(layout, argv, landlock=allowed, pass_env=config.pass_env)


__all__ = [
    "BRIDGE_PORT",
    "LAUNCHER",
    "PROC_READ_ONLY",
    "PROTECTED",
    "SECRET_MARKS",
    "SECRET_NAMES",
    "SECRET_VALUE",
    "Kind",
    "Layout",
    "bwrap_argv",
    "denied_paths",
    "expand",
    "landlock_argv",
    "launcher_argv",
    "launcher_command",
    "path_kind",
    "placeholders",
    "protected",
    "proxy_env",
    "writable_paths",
]

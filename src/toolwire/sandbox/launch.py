"""The launcher a sandboxed command starts through: ``python launch.py SPEC -- ARGV...``.

It runs inside the sandbox (under bubblewrap, or alone under Landlock) and is run as a
script, not imported: the standard library and ``pyseccomp`` only. In order:

1. the proxy bridge, when ``SPEC`` has one: a listening socket on the sandbox's own
   127.0.0.1, and a child process that forwards each connection to the host proxy's Unix
   socket (it starts before the filter, which would refuse it that socket);
2. the protected symbolic links pinned in place (then no capability is left), and the
   environment variables that look like secrets dropped (``wrap.SECRET_NAME``);
   Landlock, when ``SPEC`` asks for it: writes only beneath the listed paths;
3. the seccomp filter: no new namespaces (``unshare``, ``setns``, ``clone`` with a
   namespace flag; ``clone3``, whose flags a filter cannot read, falls back to ``clone``)
   and no ``AF_UNIX`` sockets (the host's daemons and agents are such sockets);
4. ``exec`` of ``ARGV``: the command, and everything it starts, keeps the filter.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any

_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
# Landlock (ABI 1): every access that changes the file system.
_LANDLOCK_WRITE = sum(1 << bit for bit in (1, *range(4, 13)))
_SYS_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self (x86_64, arm64)
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT = 428, 429  # the same on x86_64 and arm64
_OPEN_TREE_FLAGS = 0x1 | 0x100 | 0x80000  # OPEN_TREE_CLONE, AT_SYMLINK_NOFOLLOW, CLOEXEC


def seccomp_filter() -> Any:
    """The filter every sandboxed command runs under (module doc, step 3)."""
    import pyseccomp as sc  # type: ignore[import-untyped]  # ctypes over libseccomp

    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(defaction=sc.ALLOW)
    rules.add_rule(refuse, "unshare")
    rules.add_rule(refuse, "setns")
    for flag in _NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(refuse, "socket", sc.Arg(0, sc.EQ, socket.AF_UNIX))
    return rules


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _serve_bridge(listener: socket.socket, path: str) -> None:
    """Forever: each connection on ``listener`` joined to a new one to ``path``."""
    while True:
        inside, _ = listener.accept()
        try:
            outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            outside.connect(path)
        except OSError:
            inside.close()
            continue
        for a, b in ((inside, outside), (outside, inside)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def start_bridge(path: str, port: int) -> None:
    """Listen on 127.0.0.1:``port`` now; forward from a child process (step 1)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if os.fork() == 0:  # the child keeps no filter; it dies with the sandbox
        try:
            _serve_bridge(listener, path)
        finally:
            os._exit(0)
    listener.close()


def _syscall(number: int, *args: Any) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    result = int(libc.syscall(number, *args))
    if result < 0:
        raise OSError(ctypes.get_errno(), f"syscall {number}")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or refuses it)."""
    try:
        return _syscall(_SYS_LANDLOCK[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0


def restrict_writes(writable: Sequence[str]) -> None:
    """Landlock: from now on, this process and its children write only beneath
    ``writable`` (step 2)."""
    create, add_rule, restrict = _SYS_LANDLOCK
    handled = ctypes.c_uint64(_LANDLOCK_WRITE)
    ruleset = _syscall(create, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
    for path in writable:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path that does not exist has nothing to allow
        rule = (ctypes.c_uint8 * 12)()  # packed {u64 allowed_access; s32 parent_fd}
        ctypes.memmove(rule, ctypes.byref(ctypes.c_uint64(_LANDLOCK_WRITE)), 8)
        ctypes.memmove(ctypes.addressof(rule) + 8, ctypes.byref(ctypes.c_int32(fd)), 4)
        try:
            _syscall(add_rule, ruleset, ctypes.c_int(1), rule, ctypes.c_uint32(0))
        finally:
            os.close(fd)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _syscall(restrict, ruleset, ctypes.c_uint32(0))
    os.close(ruleset)


def pin(links: Sequence[str]) -> None:
    """Each symbolic link mounted on itself, so the command cannot remove or replace it
    (a bind mount, ``--ro-bind``, follows a link; this one does not); then every
    capability dropped. Only bubblewrap run by root leaves the launcher the right to
    mount: an ordinary user's links stay as they are (their targets are read-only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for link in links:
        tree = libc.syscall(_SYS_OPEN_TREE, -100, os.fsencode(link), _OPEN_TREE_FLAGS)
        if tree < 0:
            break  # no right to mount here: nothing can be pinned
        libc.syscall(_SYS_MOVE_MOUNT, tree, b"", -100, os.fsencode(link), 4)
        os.close(tree)
    for cap in range(64):  # the bounding set, then the sets this process holds
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
    if libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:
        sys.exit(f"cannot drop capabilities: {os.strerror(ctypes.get_errno())}")


def drop_secrets(spec: dict[str, Any]) -> None:
    """Environment variables that look like secrets (by name or by value) removed, but
    for those ``spec`` keeps: the command never sees them."""
    names, values = re.compile(spec["names"]), re.compile(spec["values"])
    for name, value in list(os.environ.items()):
        if name not in spec["keep"] and (names.fullmatch(name) or values.search(value)):
            del os.environ[name]


def main(argv: Sequence[str]) -> None:
    """``SPEC -- ARGV...``: set up (module doc) and become ``ARGV``."""
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: launch.py SPEC -- ARGV...")
    spec = json.loads(argv[0])
    if spec.get("bridge"):
        path, port = spec["bridge"]
        start_bridge(path, int(port))
    if spec.get("pin"):
        pin(spec["pin"])
    if spec.get("secrets"):
        drop_secrets(spec["secrets"])
    if spec.get("landlock") is not None:
        restrict_writes(spec["landlock"])
    seccomp_filter().load()
    command = list(argv[2:])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.exit(f"{command[0]}: {exc.strerror}")


if __name__ == "__main__":
    main(sys.argv[1:])


__all__ = [
    "drop_secrets",
    "landlock_abi",
    "main",
    "pin",
    "restrict_writes",
    "seccomp_filter",
    "start_bridge",
]

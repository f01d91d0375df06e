"""The launcher a sandboxed command starts through: ``python launch.py SPEC -- ARGV...``.

It runs inside the sandbox (under bubblewrap, or alone under Landlock) and is run as a
script, not imported, with the standard library only: every command pays for its start,
so it imports little, and the seccomp filter comes compiled in ``SPEC`` (``filter_spec``:
``pyseccomp`` builds it once, in the agent). In order:

1. the protected symbolic links pinned in place (``pin``: the one step that may use a
   capability; an ordinary user's sandbox runs it as root of its user namespace, and
   ``become`` then makes the command that user again), then every capability dropped
   (effective, permitted, inheritable, ambient, and the bounding set where this process
   may) and ``no_new_privs`` set: a command started as root holds nothing more than any
   user's;
2. the proxy bridge, when ``SPEC`` has one: a listening socket on the sandbox's own
   127.0.0.1, and a child process that forwards each connection to the host proxy's Unix
   socket (it starts before the filter, which would refuse it that socket). It holds no
   capability and is not dumpable, so the command cannot reach into it
   (``/proc/PID/mem``) to use that socket;
3. the environment variables that look like secrets dropped (``drop_secrets``), and
   Landlock, when ``SPEC`` asks for it: writes only beneath the listed paths, with every
   right the kernel's Landlock ABI knows (``landlock_rights``);
4. the seccomp filter (``seccomp_filter``): no new namespaces, no ``AF_UNIX`` sockets (the
   host's daemons and agents are such sockets) but connected pairs, no ``AF_VSOCK``
   sockets (a virtual machine's to its host), no io_uring (which makes sockets without
   ``socket(2)``), no ``ptrace`` or other process's memory, no key ring, no setuid or
   setgid bits;
5. a last check that no capability is left, then ``exec`` of ``ARGV``: the command, and
   everything it starts, keeps the filter.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

TYPE_CHECKING = False  # not ``typing``'s: importing it costs every command milliseconds
if TYPE_CHECKING:
    import socket
    from collections.abc import Sequence  # 2 ms at run time: annotations only
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
# Every argument rule compares only the bits the kernel reads: an ``int`` argument is 32
# bits, and a 64-bit comparison lets ``(1 << 32) | AF_UNIX`` through.
_INT = 0xFFFFFFFF
# The calls that reach into another process: refused whatever the target.
_OTHER_PROCESS = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp")
# The kernel's key rings: the user's (a login's tokens, Kerberos tickets) are shared with
# every process of that user.
_KEYRING = ("keyctl", "add_key", "request_key")
_IO_URING = ("io_uring_setup", "io_uring_enter", "io_uring_register")
# (call, index of its mode argument): a setuid or setgid bit is a way to run as the owner.
_CHMOD = (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2))
_SETID = (0o4000, 0o2000)  # S_ISUID, S_ISGID
# Landlock: every access that changes the file system, by the ABI that brought it.
_LANDLOCK_WRITE = sum(1 << bit for bit in (1, *range(4, 13)))  # ABI 1
_LANDLOCK_LATER: tuple[tuple[int, int], ...] = (
    (2, 1 << 13),
    (3, 1 << 14),
    (5, 1 << 15),
)  # REFER, TRUNCATE, IOCTL_DEV
_LANDLOCK_SCOPED = 0b11  # ABSTRACT_UNIX_SOCKET, SIGNAL (ABI 6)
_SYS_LANDLOCK = (444, 445, 446)  # create_ruleset, add_rule, restrict_self (x86_64, arm64)
_PR_SET_NO_NEW_PRIVS = 38
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT = 428, 429  # the same on x86_64 and arm64
_OPEN_TREE_FLAGS = 0x1 | 0x100 | 0x80000  # OPEN_TREE_CLONE, AT_SYMLINK_NOFOLLOW, CLOEXEC
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPS = ("CapInh", "CapPrm", "CapEff", "CapAmb")
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_AF_UNIX = 1
_AF_VSOCK = 40  # a virtual machine's sockets to its host: no network namespace holds them
_TYPE, _SOCK_DGRAM = 0xF, 2  # a socket type's low bits; the rest are SOCK_* flags


def seccomp_filter() -> Any:
    """The filter every sandboxed command runs under (module doc, step 4)."""
    import contextlib

    import pyseccomp as sc  # type: ignore[import-untyped]  # ctypes over libseccomp

    refuse = sc.ERRNO(errno.EPERM)
    absent = sc.ERRNO(errno.ENOSYS)  # as a kernel without it: callers fall back
    rules = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in ("unshare", "setns", *_OTHER_PROCESS, *_KEYRING):
        rules.add_rule(refuse, name)
    for flag in _NAMESPACE_FLAGS:  # a bit test reads no bit above the flag's
        rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for name in ("clone3", *_IO_URING):
        rules.add_rule(absent, name)
    for family in (_AF_UNIX, _AF_VSOCK):
        rules.add_rule(refuse, "socket", sc.Arg(0, sc.MASKED_EQ, _INT, family))
    unix = sc.Arg(0, sc.MASKED_EQ, _INT, _AF_UNIX)
    # A datagram pair can still send to (or reconnect to) a host's socket by its path;
    # a stream pair is connected for good (asyncio and many others make those).
    rules.add_rule(refuse, "socketpair", unix, sc.Arg(1, sc.MASKED_EQ, _TYPE, _SOCK_DGRAM))
    for name, index in _CHMOD:
        for bit in _SETID:
            with contextlib.suppress(OSError, ValueError):  # fchmodat2: an older libseccomp
                rules.add_rule(refuse, name, sc.Arg(index, sc.MASKED_EQ, bit, bit))
    return rules


def filter_spec() -> str:
    """``seccomp_filter`` compiled to BPF, in hex: what ``SPEC``'s ``seccomp`` holds
    (built once per process; ``bytes.fromhex`` reads it without importing a codec)."""
    if not _COMPILED:
        import tempfile

        with tempfile.TemporaryFile() as program:
            seccomp_filter().export_bpf(program)
            program.seek(0)
            _COMPILED.append(program.read().hex())
    return _COMPILED[0]


_COMPILED: list[str] = []


class _Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))  # struct sock_fprog


def load_filter(spec: str) -> None:
    """Load a filter from ``filter_spec`` (step 4); ``no_new_privs`` is set by then."""
    program = bytes.fromhex(spec)
    code = ctypes.create_string_buffer(program, len(program))
    prog = _Program(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))  # 8-byte insns
    if _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "the seccomp filter did not load")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    import contextlib
    import socket

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
    import socket
    import threading

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
    import socket  # here: most commands have no bridge

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    # Not dumpable before the fork, so the child never is: the command (no capability)
    # cannot open its memory or attach to it. ``exec`` makes the command dumpable again.
    _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.fork() == 0:  # the child keeps no filter; it dies with the sandbox
        try:
            _serve_bridge(listener, path)
        finally:
            os._exit(0)
    listener.close()


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: Any) -> int:
    result = int(_libc().syscall(number, *args))
    if result < 0:
        raise OSError(ctypes.get_errno(), f"syscall {number}")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or refuses it)."""
    try:
        return _syscall(_SYS_LANDLOCK[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0


def landlock_rights(abi: int) -> int:
    """Every right that changes the file system which Landlock ABI ``abi`` handles."""
    later = sum(bit for since, bit in _LANDLOCK_LATER if abi >= since)
    return int(_LANDLOCK_WRITE | later)


def restrict_writes(writable: Sequence[str]) -> None:
    """Landlock: from now on, this process and its children write only beneath
    ``writable`` (step 2)."""
    create, add_rule, restrict = _SYS_LANDLOCK
    abi = landlock_abi()
    rights = landlock_rights(abi)
    # {handled_access_fs, handled_access_net, scoped}; the scopes from ABI 6: no signal
    # to, and no abstract Unix socket of, a process outside the sandbox.
    attr = (ctypes.c_uint64 * 3)(rights, 0, _LANDLOCK_SCOPED if abi >= 6 else 0)
    size = ctypes.c_size_t(24 if abi >= 6 else 8)
    ruleset = _syscall(create, attr, size, ctypes.c_uint32(0))
    for path in writable:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path that does not exist has nothing to allow
        rule = (ctypes.c_uint8 * 12)()  # packed {u64 allowed_access; s32 parent_fd}
        ctypes.memmove(rule, ctypes.byref(ctypes.c_uint64(rights)), 8)
        ctypes.memmove(ctypes.addressof(rule) + 8, ctypes.byref(ctypes.c_int32(fd)), 4)
        try:
            _syscall(add_rule, ruleset, ctypes.c_int(1), rule, ctypes.c_uint32(0))
        finally:
            os.close(fd)
    _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _syscall(restrict, ruleset, ctypes.c_uint32(0))
    os.close(ruleset)


def held_capabilities() -> dict[str, int]:
    """This process's capability sets that are not empty (``/proc/self/status``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    held = {name: int(fields[name].strip(), 16) for name in _CAPS if name in fields}
    return {name: value for name, value in held.items() if value}


def drop_capabilities() -> None:
    """Step 3: nothing in any set, and nothing an ``exec`` could give back."""
    libc = _libc()
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as last:
        for cap in range(int(last.read()) + 1):  # refused without CAP_SETPCAP: then
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # no_new_privs keeps them out
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, self
    data = (ctypes.c_uint32 * 6)()  # {effective, permitted, inheritable} x 2, all empty
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


class _Plain:
    """What the C JSON scanner reads of a decoder: plain values, nothing hooked."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int, parse_constant = float, int, float


def parse_spec(text: str) -> Any:
    """``SPEC``, a JSON object: read with the C scanner ``json`` itself uses, since
    importing ``json`` (and with it ``re`` and ``enum``) would cost every command
    milliseconds."""
    try:
        import _json

        scan = _json.make_scanner(_Plain())  # type: ignore[arg-type]  # reads attributes
        value, end = scan(text, 0)
        if end == len(text):
            return value
    except Exception:  # no accelerator, or not JSON: json says why
        pass
    import json

    return json.loads(text)


def pin(links: Sequence[str]) -> None:
    """Each symbolic link mounted on itself, so the command cannot remove or replace it
    (a bind mount, ``--ro-bind``, follows a link; this one does not). ``wrap`` keeps
    ``CAP_SYS_ADMIN`` for this step alone (``drop_capabilities`` then takes it); should
    the kernel refuse the mount anyway, the link's target is still read-only."""
    libc = _libc()
    for link in links:
        tree = libc.syscall(_SYS_OPEN_TREE, -100, os.fsencode(link), _OPEN_TREE_FLAGS)
        if tree < 0:
            break  # no right to mount here: nothing can be pinned
        libc.syscall(_SYS_MOVE_MOUNT, tree, b"", -100, os.fsencode(link), 4)
        os.close(tree)


def become(uid: int, gid: int) -> None:
    """Back to the user who started the sandbox, after ``pin`` ran as root of the
    sandbox's user namespace: a user namespace of its own in which this process is
    ``uid``:``gid``. Its mounts, the pinned links among them, are locked: nothing in it
    can unmount them. Should the kernel refuse, the command runs as that namespace's
    root, which holds no capability either (``drop_capabilities``)."""
    if _libc().unshare(0x10000000) != 0:  # CLONE_NEWUSER
        return
    for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} 0 1"), ("gid_map", f"{gid} 0 1")):
        try:
            with open(f"/proc/self/{name}", "w", encoding="ascii") as out:
                out.write(line)
        except OSError:
            return


def secret_name(name: str, rules: dict[str, list[str]]) -> bool:
    """Whether ``name`` says its variable holds a secret (``wrap.SECRET_NAMES``): matched
    by hand, since importing ``re`` costs every command milliseconds."""
    upper = name.upper()
    if upper in rules["exact"] or any(part in upper for part in rules["parts"]):
        return True
    if any(upper.endswith(end) and len(upper) > len(end) for end in rules["suffixes"]):
        return True
    return any(upper == word or upper.endswith("_" + word) for word in rules["words"])


def drop_secrets(spec: dict[str, Any]) -> None:
    """Environment variables that look like secrets (by name or by value) removed, but
    for those ``spec`` keeps: the command never sees them. A value is matched with ``re``
    only when it holds one of the marks a secret value must hold."""
    values = None
    for name, value in list(os.environ.items()):
        if name in spec["keep"]:
            continue
        if not secret_name(name, spec["names"]):
            if not any(mark in value for mark in spec["marks"]):
                continue
            if values is None:
                import re

                values = re.compile(spec["values"])
            if not values.search(value):
                continue
        del os.environ[name]


def main(argv: Sequence[str]) -> None:
    """``SPEC -- ARGV...``: set up (module doc) and become ``ARGV``."""
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: launch.py SPEC -- ARGV...")
    spec = parse_spec(argv[0])
    if spec.get("pin"):  # the one step that may need a capability (``pin``)
        pin(spec["pin"])
    if spec.get("user"):
        become(*spec["user"])
    drop_capabilities()  # before the bridge forks: it must hold no more than the command
    if spec.get("bridge"):
        path, port = spec["bridge"]
        start_bridge(path, int(port))
    if spec.get("secrets"):
        drop_secrets(spec["secrets"])
    if spec.get("landlock") is not None:
        restrict_writes(spec["landlock"])
    if spec.get("seccomp"):
        load_filter(spec["seccomp"])
    else:  # run by hand: pyseccomp builds the filter here
        seccomp_filter().load()
    if held := held_capabilities():
        sets = ", ".join(f"{name} {value:#x}" for name, value in held.items())
        sys.exit(f"toolwire sandbox: the command would still hold capabilities ({sets}): not run")
    command = list(argv[2:])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.exit(f"{command[0]}: {exc.strerror}")


if __name__ == "__main__":
    main(sys.argv[1:])


__all__ = [
    "become",
    "drop_capabilities",
    "drop_secrets",
    "filter_spec",
    "held_capabilities",
    "landlock_abi",
    "landlock_rights",
    "load_filter",
    "main",
    "parse_spec",
    "pin",
    "restrict_writes",
    "seccomp_filter",
    "secret_name",
    "start_bridge",
]

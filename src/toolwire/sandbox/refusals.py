"""Did the sandbox refuse what a command tried? Read from the command's output.

A command that fails inside the sandbox because of it says so in the system's words:
``EROFS`` for a write outside the writable paths, ``EPERM`` from the seccomp filter,
no route or no resolver where there is no network. ``refused`` names what was refused
(for the user's question and the model's note), or None. Only a failed command counts,
and only the sandbox's own errors: ``chmod``/``chown`` on a file the user does not own
says "Operation not permitted" outside any sandbox too.
"""

from __future__ import annotations

import re
from typing import Final

_WRITE: Final = re.compile(r"Read-only file system")
# Where the write went, as the tools name it: ``bash: line 1: PATH: Read-only ...``,
# ``touch: cannot touch 'PATH': Read-only ...``, ``OSError: [Errno 30] ...: 'PATH'``.
_WRITTEN: Final = re.compile(
    r"'(/[^'\n]+)': Read-only file system|(/[^\s:'\n]+): Read-only file system"
    r"|Read-only file system: '(/[^'\n]+)'"
)
_NOT_PERMITTED: Final = re.compile(r"^.*Operation not permitted.*$", re.M)
# The permission errors that happen outside a sandbox just the same.
_ORDINARY: Final = re.compile(
    r"changing (permissions|ownership)|\b(chmod|chown|chgrp|kill|setfacl|chattr)\b", re.I
)
_NETWORK: Final = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution"
    r"|Name or service not known|getaddrinfo failed|Connection refused"
    r"|Failed to connect to|Received HTTP code 403 from proxy|Tunnel connection failed: 403"
    r"|CONNECT tunnel failed, response 403"
)


def refused(output: str, exit_code: int | None, *, network: bool = True) -> str | None:
    """What the sandbox refused a failed command (``exit_code`` not 0), or None.

    ``network``: whether the network is confined (a refused connection means nothing
    when it is not)."""
    if exit_code == 0 or exit_code is None:
        return None
    if _WRITE.search(output):
        where = _WRITTEN.search(output)
        path = next((g for g in where.groups() if g), None) if where else None
        return f"a write to {path}" if path else "a write outside the writable directories"
    lines = [line for line in _NOT_PERMITTED.findall(output) if not _ORDINARY.search(line)]
    if lines:
        return f"an operation the sandbox does not allow ({lines[0].strip()[:200]})"
    if network and _NETWORK.search(output):
        return "a network connection"
    return None


__all__ = ["refused"]

"""The two objects and the ref a snapshot adds on top of its directories' trees, written
without a git process each.

A snapshot is a tree holding one subtree per directory, a commit of it, and a ref to
the commit. Each would cost a process (``mktree``, ``commit-tree``, ``update-ref``),
about 3-5 ms apiece, half the time of a checkpoint of an unchanged 10,000-file tree.
Git's loose object and loose ref formats are small and fixed: an object is
``zlib("KIND SIZE\\0" + body)`` under ``objects/`` by its SHA-1, a ref a file holding
the commit's hex id. A shadow store is SHA-1 (made with no config that could say
otherwise), and ``git fsck`` checks what is written here in the tests.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Sequence
from pathlib import Path

IDENTITY = "toolwire <toolwire@localhost>"


def write_object(store: Path, kind: str, body: bytes) -> str:
    """Store ``body`` as a loose object of ``kind``; its id. An object already there is
    left as it is (same id, same bytes)."""
    data = f"{kind} {len(body)}\0".encode() + body
    oid = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    path = store / "objects" / oid[:2] / oid[2:]
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        _replace(path, zlib.compress(data, 1), mode=0o444)  # read-only, as git writes it
    return oid


def tree(subtrees: Sequence[tuple[str, str]]) -> bytes:
    """The body of a tree whose entries are the subtrees ``(name, id)``, in git's order
    (names compared as if followed by ``/``, as every entry here is a tree)."""
    ordered = sorted(subtrees, key=lambda entry: entry[0].encode() + b"/")
    return b"".join(b"40000 " + n.encode() + b"\0" + bytes.fromhex(i) for n, i in ordered)


def commit(tree_id: str, message: str, when: float) -> bytes:
    """The body of a parentless commit of ``tree_id`` at ``when`` (UTC)."""
    ident = f"{IDENTITY} {int(when)} +0000"
    return f"tree {tree_id}\nauthor {ident}\ncommitter {ident}\n\n{message}".encode()


def set_ref(store: Path, ref: str, oid: str) -> None:
    """Point ``ref`` (``refs/...``) at ``oid``, replacing it whole (a reader never sees
    half a file)."""
    path = store / ref
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, f"{oid}\n".encode(), mode=0o644)


def _replace(path: Path, data: bytes, *, mode: int) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    temporary.chmod(mode)
    os.replace(temporary, path)


__all__ = ["IDENTITY", "commit", "set_ref", "tree", "write_object"]

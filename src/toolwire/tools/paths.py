"""Path safety: every path a tool touches must lie inside the session's roots.

A path the model gives is made absolute against the session cwd (``~`` expanded), then
resolved with ``os.path.realpath``: every symlink that exists along it is followed, and
the part that does not exist yet (a new file, new directories) is normalized lexically,
so for a new file it is the nearest existing ancestor that gets checked. The resolved
path must be a root or lie under one (roots are resolved the same way). A symlink inside
a root that points inside a root is fine; one that leads out, or a ``..`` that climbs
out, is refused with a message naming both the path and where it leads.

Tools then work on the resolved path and never resolve it again: the local file system
opens it without following any link (``tools.nofollow``), so a file or directory swapped
for a link between the check and the use is refused, not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from toolwire.tools.errors import PathRefusedError, ToolError


def resolve_root(path: str | os.PathLike[str]) -> Path:
    """A root as the checks compare it: absolute with every symlink resolved."""
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(path))))


def within(path: Path, roots: Iterable[Path]) -> bool:
    """True when the resolved ``path`` is one of ``roots`` or lies under one."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_path(raw: str, cwd: Path, roots: Sequence[Path]) -> Path:
    """The real absolute path for ``raw``; ``PathRefusedError`` when it escapes the roots."""
    if not raw.strip():
        raise ToolError("The path is empty.")
    if "\0" in raw:
        raise ToolError("The path contains a NUL character.")
    given = Path(os.path.expanduser(raw))
    absolute = given if given.is_absolute() else cwd / given
    real = Path(os.path.realpath(absolute))
    if within(real, roots):
        return real
    lexical = Path(os.path.normpath(absolute))
    shown = ", ".join(str(r) for r in roots)
    if within(lexical, roots):
        raise PathRefusedError(
            f"Refused: {raw} leads through a symbolic link to {real}, which is outside the "
            f"session's directories ({shown})."
        )
    raise PathRefusedError(
        f"Refused: {lexical} is outside the session's directories ({shown}). "
        "Only files under those directories can be used."
    )


__all__ = ["PathRefusedError", "resolve_path", "resolve_root", "within"]

"""Project instructions: the ``AGENTS.md`` files a session's system prompt carries.

In this order, each under its path: the user's ``$XDG_CONFIG_HOME/toolwire/AGENTS.md``
(``~/.config/...``), then one file per directory from the repository root (the nearest
ancestor of the session's cwd holding ``.git``; without one, the cwd alone) down to the
cwd: ``AGENTS.md``, else ``CLAUDE.md``, else ``GEMINI.md`` (many projects have only
those). Later files are closer to the work, so they come last and win a disagreement.

The rendered block is bounded (``MAX_BYTES`` in all, a visible marker naming what was
cut) and byte-stable: the same files give the same bytes, with no timestamps, so the
provider's prompt cache keeps hitting. ``Instructions.refresh`` runs before each prompt:
it stats the candidates and re-reads only when a path, mtime or size changed. Local
reads: these are the user's own files, not the model's doing. No asyncio here.

A project file that is a symbolic link leading out of the project (the repository root,
else the cwd) and out of the user's config directory is not read: a cloned repository's
``AGENTS.md -> ~/.aws/credentials`` would otherwise send the credentials to the provider.
It is treated as absent (the next name in that directory is tried) and reported as a
``Refused``; the session tells the user once. Links inside the project are read, and so
are the user's own files wherever they lead (the user made those links: dotfiles). The
check resolves every link with ``os.path.realpath``, as the built-in Read does, and the
file is then opened at its resolved path without following any link (``tools.nofollow``),
so a file swapped for a link after the check is not read either; a file that is not a
regular one (a named pipe, a device) is skipped (``toolwire.safe_read``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolwire.config.load import config_path
from toolwire.safe_read import read_file
from toolwire.tools.nofollow import open_directory
from toolwire.tools.paths import resolve_root, within

MAX_BYTES = 32 * 1024
log = logging.getLogger("toolwire.agent")
NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
HEADER = (
    "# Instructions from the user and the project\n\n"
    "The files below are the user's and the project's standing instructions, each under "
    "its path. Follow them; where two disagree, the later one (closer to the working "
    "directory) wins."
)

Stamp = tuple[str, int, int]
"""A file's path, mtime (ns) and size: when any changes, the file is read again."""


def repo_root(cwd: str | os.PathLike[str]) -> Path:
    """The nearest ancestor of ``cwd`` (itself included) holding ``.git``; else ``cwd``."""
    start = Path(cwd)
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def project_dirs(cwd: str | os.PathLike[str]) -> list[Path]:
    """The directories from the repository root down to ``cwd``, root first."""
    start, root = Path(cwd), repo_root(cwd)
    chain = [start]
    while chain[-1] != root:
        chain.append(chain[-1].parent)
    return chain[::-1]


@dataclass(frozen=True, slots=True)
class Refused:
    """A project file not read: a link to ``target``, outside the trusted directories."""

    path: Path
    target: Path

    def notice(self) -> str:
        """The line the user is told (and ``toolwire config`` shows)."""
        return (
            f"{self.path} is a link to a file outside the project ({self.target}) and was not read."
        )


def trusted_roots(
    cwd: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> list[Path]:
    """Where a project file may lead: the project root and the user's config directory."""
    return [resolve_root(repo_root(cwd)), resolve_root(config_path(environ).parent)]


def leads_out(path: Path, roots: Sequence[Path]) -> Refused | None:
    """A ``Refused`` when ``path`` resolves outside ``roots``; None when it may be read."""
    real = Path(os.path.realpath(path))
    return None if within(real, roots) else Refused(path, real)


def read_capped(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file ``path``, read at its resolved path
    without following a link (so a huge file costs no more than the cap, and a pipe or a
    device is refused with ``safe_read.NotReadError`` rather than waited on)."""
    real = Path(os.path.realpath(path))
    parent = open_directory(real.parent)  # each component opened without following links
    try:
        return read_file(real.name, limit, head=True, follow_links=False, dir_fd=parent)
    finally:
        os.close(parent)


def scan(
    cwd: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> tuple[list[Path], list[Refused]]:
    """The files a session in ``cwd`` loads, in prompt order, and the links refused."""
    found: list[Path] = []
    refused: list[Refused] = []
    user = config_path(environ).parent / "AGENTS.md"
    if user.is_file():
        found.append(user)
    roots = trusted_roots(cwd, environ)
    for folder in project_dirs(cwd):
        for name in NAMES:
            candidate = folder / name
            if not candidate.is_file() or candidate == user:
                continue
            out = leads_out(candidate, roots)
            if out is None:
                found.append(candidate)
                break
            refused.append(out)
    return found, refused


def instruction_files(
    cwd: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The files a session in ``cwd`` loads, in prompt order."""
    return scan(cwd, environ)[0]


def render(files: list[tuple[str, str]], limit: int = MAX_BYTES) -> str:
    """``(label, text)`` pairs as one block of at most about ``limit`` bytes; "" if none.

    What does not fit is cut from the end (the marker names each file cut short or left
    out), so the user's own file and the repository's root file survive longest.
    """
    shown = [(label, text.strip()) for label, text in files if text.strip()]
    if not shown:
        return ""
    parts, room, cut = [HEADER], limit, []
    for label, text in shown:
        section = f"## {label}\n\n{text}"
        size = len(section.encode())
        if size <= room:
            parts.append(section)
            room -= size
            continue
        if room > len(label) + 64:  # enough for part of it to be worth showing
            kept = section.encode()[:room].decode(errors="ignore")
            parts.append(kept.rstrip())
            cut.append(f"{label} (cut after {len(kept.encode())} of {size} bytes)")
        else:
            cut.append(f"{label} (left out)")
        room = 0
    if cut:
        parts.append(f"[instructions cut at {limit // 1024} KB: {'; '.join(cut)}]")
    return "\n\n".join(parts)


def _stamp(path: Path) -> Stamp | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size)


@dataclass(slots=True)
class Instructions:
    """A session's instruction block, re-read when its files change."""

    text: str = ""
    files: list[Path] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    _stamps: tuple[Stamp, ...] | None = None
    _told: set[Path] = field(default_factory=set)

    def refresh(self, cwd: str, environ: Mapping[str, str] | None = None) -> bool:
        """Look at the files again (stats only when nothing changed); True if re-read."""
        files, self.refused = scan(cwd, environ)
        stamps = tuple(s for s in map(_stamp, files) if s is not None)
        if stamps == self._stamps:
            return False
        pairs = []
        for path in files:
            try:
                data = read_capped(path, MAX_BYTES + 1)
            except OSError as exc:  # a pipe or a device: refused by ``safe_read``
                log.warning("instructions %s skipped: %s", path, exc.strerror or exc)
                continue
            pairs.append((str(path), data.decode(errors="replace")))
        self.text, self.files, self._stamps = render(pairs), files, stamps
        return True

    def untold(self, more: Iterable[Refused] = ()) -> list[str]:
        """The notices of refused files (``self.refused`` and ``more``) not yet given in
        this session; each counts as given from now on."""
        lines = []
        for refused in (*self.refused, *more):
            if refused.path not in self._told:
                self._told.add(refused.path)
                lines.append(refused.notice())
        return lines


__all__ = [
    "MAX_BYTES",
    "NAMES",
    "Instructions",
    "Refused",
    "instruction_files",
    "leads_out",
    "project_dirs",
    "read_capped",
    "render",
    "repo_root",
    "scan",
    "trusted_roots",
]

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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolwire.config.load import config_path

MAX_BYTES = 32 * 1024
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


def instruction_files(
    cwd: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The files a session in ``cwd`` loads, in prompt order."""
    found: list[Path] = []
    user = config_path(environ).parent / "AGENTS.md"
    if user.is_file():
        found.append(user)
    for folder in project_dirs(cwd):
        chosen = next((folder / n for n in NAMES if (folder / n).is_file()), None)
        if chosen is not None and chosen != user:
            found.append(chosen)
    return found


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
    _stamps: tuple[Stamp, ...] | None = None

    def refresh(self, cwd: str, environ: Mapping[str, str] | None = None) -> bool:
        """Look at the files again (stats only when nothing changed); True if re-read."""
        files = instruction_files(cwd, environ)
        stamps = tuple(s for s in map(_stamp, files) if s is not None)
        if stamps == self._stamps:
            return False
        pairs = []
        for path in files:
            try:
                with path.open("rb") as handle:  # a huge file costs no more than the cap
                    data = handle.read(MAX_BYTES + 1)
            except OSError:
                continue
            pairs.append((str(path), data.decode(errors="replace")))
        self.text, self.files, self._stamps = render(pairs), files, stamps
        return True


__all__ = [
    "MAX_BYTES",
    "NAMES",
    "Instructions",
    "instruction_files",
    "project_dirs",
    "render",
    "repo_root",
]

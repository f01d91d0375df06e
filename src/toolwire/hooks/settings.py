"""The hook settings of a project and of the user, in Claude Code's format.

::

    {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
    ]}}

Read, in this order: ``~/.claude/settings.json`` (the user's own: trusted), then the
project's ``.claude/settings.json``, ``.claude/settings.local.json`` and
``.toolwire/settings.json`` (run only once the user trusted that file's content). A file
that is missing, not JSON or without ``hooks`` adds nothing; one that is not a regular
file or is over ``MAX_FILE_BYTES`` is skipped with one line, logged once
(``toolwire.safe_read``); a malformed entry is left out with a line in
``Source.problems`` for the user. Only ``type: "command"`` hooks run;
the other types Claude Code has (``prompt``, ``http``...) are reported and skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, get_args

from toolwire.safe_read import NotReadError, read_file

Event: TypeAlias = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "PreCompact"
]
EVENTS: Final[tuple[Event, ...]] = get_args(Event)
DEFAULT_TIMEOUT: Final = 60.0
"""Seconds a hook may run when its entry sets no ``timeout`` (Claude Code's default)."""
MAX_FILE_BYTES: Final = 1024 * 1024
"""A settings file larger than this is skipped (Claude Code's are a few KB)."""
log = logging.getLogger("toolwire.hooks")
_told: set[str] = set()  # lines already logged: the files are read at every hook point
PROJECT_FILES: Final = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".toolwire/settings.json",
)


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One ``command`` hook: the shell command line and its timeout in seconds."""

    command: str
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True, slots=True)
class Group:
    """A matcher and the commands it runs, for one event."""

    event: Event
    matcher: str
    commands: tuple[HookCommand, ...]


@dataclass(frozen=True, slots=True)
class Source:
    """One settings file: where, whether it is the user's own, its content hash, its hooks."""

    path: Path
    trusted: bool
    digest: str
    groups: tuple[Group, ...] = ()
    problems: tuple[str, ...] = field(default=())

    def commands(self) -> list[str]:
        """Every command line in the file, for the trust question."""
        return [c.command for g in self.groups for c in g.commands]


def read_sources(cwd: str | os.PathLike[str], home: Path | None = None) -> list[Source]:
    """The settings files that have hooks, user's first; a project file that is the
    user's own (a session in the home directory) is read once, as the user's."""
    home = home if home is not None else Path.home()
    paths = [(home / ".claude" / "settings.json", True)]
    paths += [(Path(cwd) / name, False) for name in PROJECT_FILES]
    seen: set[Path] = set()
    found = []
    for path, trusted in paths:
        key = _resolved(path)
        if key in seen:
            continue
        seen.add(key)
        source = read_source(path, trusted=trusted)
        if source is not None and (source.groups or source.problems):
            found.append(source)
    return found


def read_source(path: Path, *, trusted: bool) -> Source | None:
    """One file's hooks; None when it does not exist. One that is not a regular file,
    is over ``MAX_FILE_BYTES`` or cannot be read has no hooks and one problem (logged)."""
    try:
        raw = read_file(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    except NotReadError as exc:
        line = f"{exc.strerror}: its hooks were skipped"
        if line not in _told:
            _told.add(line)
            log.warning("%s", line)
        return Source(path, trusted, "", problems=(line,))
    except OSError:
        return None
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return Source(path, trusted, digest, problems=(f"{path}: not JSON ({exc})",))
    groups, problems = parse_hooks(data.get("hooks") if isinstance(data, dict) else None, path)
    return Source(path, trusted, digest, tuple(groups), tuple(problems))


def parse_hooks(hooks: Any, where: Path) -> tuple[list[Group], list[str]]:
    """The groups of a ``hooks`` object, and a line for each entry left out."""
    groups: list[Group] = []
    problems: list[str] = []
    if hooks is None:
        return groups, problems
    if not isinstance(hooks, dict):
        return groups, [f"{where}: 'hooks' is not an object"]
    for event, entries in hooks.items():
        if event not in EVENTS:
            continue  # Claude Code has more events; toolwire runs the ones it has points for
        if not isinstance(entries, list):
            problems.append(f"{where}: hooks.{event} is not a list")
            continue
        for entry in entries:
            group = _group(event, entry, where, problems)
            if group is not None:
                groups.append(group)
    return groups, problems


def _group(event: Event, entry: Any, where: Path, problems: list[str]) -> Group | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        problems.append(f"{where}: an entry of hooks.{event} has no 'hooks' list")
        return None
    matcher = entry.get("matcher") or ""
    if not isinstance(matcher, str):
        problems.append(f"{where}: a matcher of hooks.{event} is not a string")
        return None
    commands = []
    for hook in entry["hooks"]:
        kind = hook.get("type") if isinstance(hook, dict) else None
        command = hook.get("command") if isinstance(hook, dict) else None
        if kind != "command" or not isinstance(command, str) or not command.strip():
            problems.append(f"{where}: a {kind or 'malformed'} hook of {event} skipped")
            continue
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        ok = isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0
        commands.append(HookCommand(command, float(timeout) if ok else DEFAULT_TIMEOUT))
    return Group(event, matcher, tuple(commands)) if commands else None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "PROJECT_FILES",
    "Event",
    "Group",
    "HookCommand",
    "Source",
    "parse_hooks",
    "read_source",
    "read_sources",
]

"""What ``/rewind`` is asked (``parse``) and what it answers (``RewindReport``).

``/rewind`` lists the prompts; ``/rewind N [code|conversation|both] [force]`` goes back
to just before prompt N (default ``both``); ``/rewind undo`` puts back the state from
just before the last rewind. Bad input is one line saying what is wrong and what to do.
The extension method ``_toolwire/session/rewind`` answers ``RewindReport.wire()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, get_args

from toolwire.errors import UsageError

Scope = Literal["code", "conversation", "both"]
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
USAGE: Final = "Use /rewind to list the prompts, /rewind N [code|conversation|both] [force]."


class RewindInputError(UsageError):
    """The command or the method's parameters do not say a rewind; one line for the user."""


@dataclass(frozen=True, slots=True)
class Ask:
    """A parsed ``/rewind``: ``kind`` list, undo or rewind (with its prompt and scope)."""

    kind: Literal["list", "undo", "rewind"]
    prompt: int = 0
    scope: Scope = "both"
    force: bool = False


def parse(argument: str) -> Ask:
    """The ``/rewind`` argument as an ``Ask``; ``RewindInputError`` for anything else."""
    words = argument.split()
    if not words:
        return Ask("list")
    if words == ["undo"]:
        return Ask("undo")
    head, *rest = words
    if not head.isdecimal() or int(head) < 1:
        raise RewindInputError(f"/rewind {head}: not a prompt number. {USAGE}")
    scope: Scope = "both"
    force = False
    for word in rest:
        if word in SCOPES:
            scope = word
        elif word == "force":
            force = True
        else:
            raise RewindInputError(f"/rewind {argument.strip()}: {word!r} is unknown. {USAGE}")
    return Ask("rewind", int(head), scope, force)


@dataclass(slots=True)
class RewindReport:
    """What a rewind (or its undo) did. ``code``: why the files were left alone (None:
    they were rewound, or not asked); ``conversation``: the conversation was rewound."""

    prompt: int | None
    scope: Scope
    conversation: bool = False
    restored: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    recreated: list[Path] = field(default_factory=list)
    conflicts: list[Path] = field(default_factory=list)
    skipped: Mapping[Path, str] = field(default_factory=dict)
    code: str | None = None
    blocked: Mapping[Path, str] = field(default_factory=dict)
    """Files that could not be written or removed: then nothing was rewound at all."""
    unsure: list[str] = field(default_factory=list)
    """``after-N`` snapshots missing (turns stopped mid-way): the conflicts were wider."""

    def wire(self) -> dict[str, Any]:
        """The extension method's answer (paths as strings)."""
        return {
            "prompt": self.prompt,
            "scope": self.scope,
            "conversation": self.conversation,
            "restored": [str(p) for p in self.restored],
            "removed": [str(p) for p in self.removed],
            "recreated": [str(p) for p in self.recreated],
            "conflicts": [str(p) for p in self.conflicts],
            "skipped": {str(p): why for p, why in self.skipped.items()},
            "codeNotRewound": self.code,
            "blocked": {str(p): why for p, why in self.blocked.items()},
        }

    def text(self, cwd: str) -> str:
        """The reply to the command: a marker line, then what happened, file by file."""
        head = (
            "── Undid the last rewind ──"
            if self.prompt is None
            else f"── Rewound to before prompt {self.prompt} ({self.scope}) ──"
        )
        lines = [head]
        if self.blocked:
            what = "the last rewind" if self.prompt is None else f"to prompt {self.prompt}"
            return "\n".join([f"── Not rewound {what} ──", *_blocked(self, cwd)])
        if self.conversation:
            lines.append(
                "Conversation: put back as it was."
                if self.prompt is None
                else "Conversation: the model sees only what came before that prompt."
            )
        if self.code is not None:
            lines.append(f"Files: not rewound: {self.code}.")
        elif self.scope != "conversation":
            lines += _files(self, cwd)
        return "\n".join(lines)


def _blocked(report: RewindReport, cwd: str) -> list[str]:
    named = ", ".join(f"{_name(p, cwd)} ({why})" for p, why in report.blocked.items())
    again = "/rewind undo" if report.prompt is None else f"/rewind {report.prompt}"
    return [
        f"Nothing was rewound, files or conversation: these cannot be changed: {named}.",
        f"Make them writable (or move what is in the way) and run {again} again.",
    ]


def _files(report: RewindReport, cwd: str) -> list[str]:
    groups = [
        ("Files restored", report.restored),
        ("Files removed", report.removed),
        ("Files recreated", report.recreated),
        ("Files left as they are (conflicts: changed outside a turn; add force to overwrite)",
         report.conflicts),
    ]  # fmt: skip
    lines = [f"{label}: {_names(paths, cwd)}" for label, paths in groups if paths]
    if report.unsure:
        turns = ", ".join(n.removeprefix("after-") for n in report.unsure)
        lines.append(
            f"The end of the turn of prompt {turns} was not checkpointed (stopped mid-turn): "
            "every file changed since counts as a conflict."
        )
    if report.skipped:
        named = ", ".join(f"{_name(p, cwd)} ({why})" for p, why in report.skipped.items())
        lines.append(f"Files skipped: {named}")
    return lines or ["Files: nothing to change."]


def _names(paths: list[Path], cwd: str) -> str:
    return ", ".join(_name(p, cwd) for p in paths)


def _name(path: Path, cwd: str) -> str:
    """A path relative to the session's cwd when it is inside it."""
    base = Path(cwd).resolve()  # the checkpoint store names files under resolved roots
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)


__all__ = ["SCOPES", "USAGE", "Ask", "RewindInputError", "RewindReport", "Scope", "parse"]

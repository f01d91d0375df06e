"""Which shell commands are read-only: the Bash dedup rule of the handoff.

A read-only command's latest result replaces its earlier ones; every other command is
kept each time it ran (docs/handoff.md). Mistaking a side-effecting command for a
read-only one would hide that it ran, so the default is side-effecting and a command is
read-only only when the whole line lexes cleanly (``shell.parse_command``) and every
simple command in it is a known read-only program with safe flags. The program lists
follow Codex's ``is_known_safe_command`` (openai/codex, ``is_safe_command.rs``) and Claude
Code's read-only command validator: a flag that writes a file or runs another program
(``find -delete``, ``sed -i``, ``sort -o``, ``git -c``) makes the program unsafe.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from toolwire.handoff.git_rules import git_reason, names
from toolwire.handoff.shell import parse_command

CommandKind: TypeAlias = Literal["read-only", "side-effecting"]

#: Read-only whatever their arguments (none of them writes or runs other programs).
ALWAYS_SAFE = names(
    """
    : [ arch basename cal cat cd cmp column comm cut df diff dirname du echo egrep expand
    expr false fgrep fmt fold free grep groups head hexdump id jq locale ls md5sum nl nproc
    numfmt od paste printenv ps pwd readlink realpath rev seq sha1sum sha256sum sha512sum
    sleep stat strings tac tail test tr true tty type uname unexpand uptime wc whereis which
    whoami
    """
)
#: Version probes: read-only only in exactly these forms.
VERSION_ARGS: Mapping[str, frozenset[tuple[str, ...]]] = {
    **{p: frozenset({("--version",), ("-V",)}) for p in ("python", "python3", "pip", "pip3")},
    **{p: frozenset({("--version",), ("-v",)}) for p in ("node", "npm", "pnpm", "yarn", "bun")},
    **{p: frozenset({("--version",), ("-V",)}) for p in ("cargo", "rustc", "uv", "ruff")},
    "go": frozenset({("version",)}),
    "git": frozenset({("--version",)}),
}
_FIND_UNSAFE = names(
    "-exec -execdir -ok -okdir -delete -fls -fprint -fprint0 -fprintf -files0-from"
)
_SED_PRINT = re.compile(r"\s*(\d+|\$)(\s*,\s*(\d+|\$))?\s*p\s*")
_SED_FLAGS = frozenset({"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended"})
_TIMEOUT = re.compile(r"\d+(\.\d+)?[smhd]?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

Check: TypeAlias = Callable[[Sequence[str]], "str | None"]


@dataclass(frozen=True, slots=True)
class CommandClass:
    """The verdict on one command line and why; ``normalized`` is its dedup spelling."""

    kind: CommandKind
    reason: str
    normalized: str

    @property
    def read_only(self) -> bool:
        return self.kind == "read-only"


@functools.lru_cache(maxsize=4096)  # sessions rerun the same few commands many times
def classify_command(command: str) -> CommandClass:
    """Classify a Bash command line; never raises (unparseable means side-effecting).

    ``normalized`` re-quotes the words and joins them with single spaces, so spellings
    that run the same thing (``ls  -la`` and ``ls -la``) share a dedup key; a line that
    does not lex cleanly keeps its exact text (stripped).
    """
    parsed = parse_command(command)
    normalized = parsed.normalized()
    if parsed.hazard is not None or normalized is None:
        return CommandClass("side-effecting", parsed.hazard or "unparseable", command.strip())
    for words in parsed.segments:
        reason = segment_reason(words)
        if reason is not None:
            return CommandClass("side-effecting", reason, normalized)
    return CommandClass("read-only", "every command is a known read-only one", normalized)


def segment_reason(words: Sequence[str]) -> str | None:
    """Why one simple command is not read-only, or None when it is."""
    if words and words[0] == "timeout":
        if len(words) < 3 or not _TIMEOUT.fullmatch(words[1]):
            return "timeout with options"
        words = words[2:]  # ``timeout 10 cmd`` is as read-only as ``cmd``
    program, args = words[0], words[1:]
    if _ASSIGNMENT.match(program):
        return "environment assignment"
    if "/" in program:
        return f"program given by path: {program}"
    if program in ALWAYS_SAFE:
        return None
    if program in VERSION_ARGS and tuple(args) in VERSION_ARGS[program]:
        return None
    check = CHECKS.get(program)
    if check is None:
        return f"{program} is not a known read-only program"
    return check(args)


def has_flag(args: Sequence[str], shorts: str, longs: tuple[str, ...]) -> str | None:
    """The first argument that is one of the flags (short ones may be clustered: ``-ni``)."""
    for arg in args:
        if arg == "--":
            return None
        if arg.startswith("--"):
            if arg.split("=", 1)[0] in longs:
                return arg
        elif arg.startswith("-") and len(arg) > 1 and any(ch in shorts for ch in arg[1:]):
            return arg
    return None


def _unsafe_flag(program: str, shorts: str, longs: tuple[str, ...]) -> Check:
    def check(args: Sequence[str]) -> str | None:
        flag = has_flag(args, shorts, longs)
        return None if flag is None else f"{program} {flag} writes or runs other programs"

    return check


def _positionals(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-") or a == "-"]


def _find(args: Sequence[str]) -> str | None:
    for arg in args:
        if arg in _FIND_UNSAFE or arg.startswith("-fprint"):
            return f"find {arg} changes files or runs programs"
    return None


def _sed(args: Sequence[str]) -> str | None:
    flags = [a for a in args if a.startswith("-")]
    rest = [a for a in args if not a.startswith("-")]
    if any(f not in _SED_FLAGS for f in flags) or not rest:
        return "sed with flags other than -n/-E (it may edit in place)"
    if not _SED_PRINT.fullmatch(rest[0]):
        return "sed script other than a line print (N,Mp)"
    return None


def _date(args: Sequence[str]) -> str | None:
    if has_flag(args, "s", ("--set",)) or any(not a.startswith("+") for a in _positionals(args)):
        return "date may set the clock"
    return None


def _uniq(args: Sequence[str]) -> str | None:
    return "uniq with an output file" if len(_positionals(args)) > 1 else None


def _no_args(program: str) -> Check:
    return lambda args: None if not args else f"{program} with arguments"


def _printf(args: Sequence[str]) -> str | None:
    return "printf with flags" if args and args[0].startswith("-") else None


def _command(args: Sequence[str]) -> str | None:
    return None if args and args[0] in ("-v", "-V") else "command runs a program"


CHECKS: Mapping[str, Check] = {
    "find": _find,
    "sed": _sed,
    "date": _date,
    "uniq": _uniq,
    "printf": _printf,
    "command": _command,
    "git": git_reason,
    "env": _no_args("env"),
    "hostname": _no_args("hostname"),
    "rg": _unsafe_flag("rg", "z", ("--pre", "--pre-glob", "--hostname-bin", "--search-zip")),
    "sort": _unsafe_flag("sort", "o", ("--output", "--compress-program")),
    "tree": _unsafe_flag("tree", "o", ("--output",)),
    "base64": _unsafe_flag("base64", "o", ("--output",)),
    "file": _unsafe_flag("file", "C", ("--compile",)),
}
"""Programs that are read-only unless given certain flags or arguments."""


__all__ = [
    "ALWAYS_SAFE",
    "CHECKS",
    "CommandClass",
    "CommandKind",
    "classify_command",
    "has_flag",
    "segment_reason",
]

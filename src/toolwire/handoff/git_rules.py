"""Which ``git`` invocations are read-only (after Codex and Claude Code's read-only lists).

Inspection subcommands (``status``, ``log``, ``diff``, ``show``...) are read-only unless
given a flag that writes a file or runs another program (``--output``, ``--ext-diff``,
``--textconv``, ``-O``). Listing subcommands (``branch``, ``tag``, ``remote``, ``stash``,
``worktree``, ``reflog``, ``config``) are read-only only in their listing forms:
``git branch x`` creates a branch. Global options are refused except ``--no-pager`` and
``-C DIR``: ``-c`` and ``--config-env`` can set a pager or an external diff program.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


def names(text: str) -> frozenset[str]:
    """Whitespace-separated names as a set (long tables read better as text)."""
    return frozenset(text.split())


INSPECT = names(
    """
    blame cat-file count-objects describe diff for-each-ref grep log ls-files ls-tree
    merge-base name-rev rev-list rev-parse shortlog show status whatchanged
    """
)
UNSAFE_FLAGS = frozenset(
    {"--output", "--ext-diff", "--textconv", "--exec", "--paginate", "-O", "--open-files-in-pager"}
)
_BRANCH_FLAGS = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--no-color"}
)
_LIST = frozenset({"-l", "--list"})
_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_CONFIG_WRITE = frozenset(
    {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section",
     "-e", "--edit"}
)  # fmt: skip


def git_reason(args: Sequence[str]) -> str | None:
    """Why ``git ARGS`` is not read-only, or None when it is."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--no-pager":
            i += 1
        elif args[i] == "-C" and i + 1 < len(args):
            i += 2
        else:
            return f"git option {args[i]} may run other programs"
    if i == len(args):
        return None  # bare ``git`` prints its help
    sub, rest = args[i], args[i + 1 :]
    for arg in rest:
        if arg.split("=", 1)[0] in UNSAFE_FLAGS:
            return f"git {sub} {arg} writes a file or runs a program"
    if sub in INSPECT:
        return None
    listing = LISTING.get(sub)
    if listing is None:
        return f"git {sub} may change the repository"
    return None if listing(rest) else f"git {sub} in a form that changes something"


def _branch(rest: Sequence[str]) -> bool:
    flags = [a for a in rest if a.startswith("-")]
    named = [a for a in rest if not a.startswith("-")]
    known = all(f in _BRANCH_FLAGS or f in _LIST or f.startswith("--format=") for f in flags)
    # Without --list a name creates a branch; with it, names are patterns to list.
    return known and (not named or any(f in _LIST for f in flags))


def _tag(rest: Sequence[str]) -> bool:
    flags = [a for a in rest if a.startswith("-")]
    named = [a for a in rest if not a.startswith("-")]
    return all(f in _LIST or f.startswith("-n") for f in flags) and (
        not named or any(f in _LIST for f in flags)
    )


def _remote(rest: Sequence[str]) -> bool:
    return not rest or tuple(rest) in (("-v",), ("--verbose",)) or rest[0] == "get-url"


def _config(rest: Sequence[str]) -> bool:
    return any(a in _CONFIG_READ for a in rest) and not any(a in _CONFIG_WRITE for a in rest)


def _reflog(rest: Sequence[str]) -> bool:
    return not rest or rest[0] == "show" or rest[0].startswith("-")


def _first_is(word: str) -> Callable[[Sequence[str]], bool]:
    return lambda rest: bool(rest) and rest[0] == word


LISTING: Mapping[str, Callable[[Sequence[str]], bool]] = {
    "branch": _branch,
    "tag": _tag,
    "remote": _remote,
    "config": _config,
    "reflog": _reflog,
    "stash": lambda rest: bool(rest) and rest[0] in ("list", "show"),
    "worktree": _first_is("list"),
}
"""Subcommands that list in some forms and change things in others: is this form a list?"""


__all__ = ["INSPECT", "LISTING", "UNSAFE_FLAGS", "git_reason", "names"]

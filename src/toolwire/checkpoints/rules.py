"""The pure rules of rewinding: snapshot names, conflicts, what retention drops.

The agent names the snapshot before prompt N ``before-N`` and the one when turn N ends
``after-N``. A file changed *outside* a turn (the user in an editor, between prompts)
must not be overwritten by a rewind: so for a rewind to before prompt ``target`` with
``last`` prompts taken, the changes between ``after-(k-1)`` and ``before-k`` for every
prompt ``k`` after the target, and between ``after-last`` and now, are conflicts.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import Path

from toolwire.checkpoints.model import Changes

_PROMPT = re.compile(r"(?:before|after)-(\d+)")


def before(prompt: int) -> str:
    """The snapshot taken before prompt ``prompt`` reaches the model."""
    return f"before-{prompt}"


def after(prompt: int) -> str:
    """The snapshot taken when the turn of prompt ``prompt`` ends."""
    return f"after-{prompt}"


def prompt_of(name: str) -> int | None:
    """The prompt a ``before-N`` or ``after-N`` snapshot belongs to (None for others)."""
    found = _PROMPT.fullmatch(name)
    return int(found.group(1)) if found else None


def outside_windows(target: int, last: int) -> list[tuple[str, str | None]]:
    """The (since, until) snapshot names whose changes no turn made, for a rewind to
    before prompt ``target`` after ``last`` prompts; ``None`` is the tree now."""
    windows: list[tuple[str, str | None]] = [
        (after(k - 1), before(k)) for k in range(target + 1, last + 1)
    ]
    windows.append((after(last), None))
    return windows


def strict_windows(target: int, last: int, taken: Collection[str]) -> list[tuple[str, str | None]]:
    """``outside_windows`` over the snapshots that exist (``taken``; ``before(target)``
    must be one). A missing bound widens its window to the nearest snapshot that exists,
    earlier for a start and later for an end (else now): a turn whose end was never
    checkpointed (the agent killed mid-turn) then counts wholly as outside, so what the
    user did after it is a conflict too. Stricter, never skipped."""
    order = [name for k in range(target, last + 1) for name in (before(k), after(k))]
    windows = []
    for since, until in outside_windows(target, last):
        at = order.index(since)
        since = next((n for n in reversed(order[: at + 1]) if n in taken), before(target))
        if until is not None and until not in taken:
            later = order[order.index(until) :]
            until = next((n for n in later if n in taken), None)
        windows.append((since, until))
    return windows


def missing(target: int, last: int, taken: Collection[str]) -> list[str]:
    """The snapshots the conflict rule for a rewind to ``target`` wants and lacks."""
    wanted = {name for window in outside_windows(target, last) for name in window if name}
    return sorted(wanted - set(taken), key=lambda n: (prompt_of(n) or 0, n))


def conflicts(outside: Iterable[Changes]) -> frozenset[Path]:
    """Every file changed in any of the windows outside a turn."""
    found: frozenset[Path] = frozenset()
    for changes in outside:
        found |= changes.paths()
    return found


def pruned(names: Iterable[str], keep: int) -> list[str]:
    """The snapshots retention drops: those of prompts older than the last ``keep``
    prompts; snapshots of no prompt (``undo``) stay."""
    numbered = {name: prompt_of(name) for name in names}
    prompts = sorted({n for n in numbered.values() if n is not None})
    if len(prompts) <= keep:
        return []
    oldest_kept = prompts[-keep] if keep > 0 else prompts[-1] + 1
    return sorted(name for name, n in numbered.items() if n is not None and n < oldest_kept)


__all__ = [
    "after",
    "before",
    "conflicts",
    "missing",
    "outside_windows",
    "prompt_of",
    "pruned",
    "strict_windows",
]

"""What a tool call's card shows of its result: content helpers shared by every tool.

``bounded_diff`` bounds an edit's diff like ``Read`` bounds a file: the whole texts when
they fit, else the changed lines with some context and a note saying what was left out.
The agent shows it twice for one edit, when it asks (the preview) and when it ends.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.updates.wire import diff_content, text_content

CONTEXT_LINES: Final = 3
"""Unchanged lines kept around a change in a diff cut to its changed lines."""


def bounded_diff(path: str, new: str, old: str | None, limit: int) -> list[dict[str, Any]]:
    """A ``diff`` item whose ``oldText`` and ``newText`` hold at most ``limit`` characters
    each, plus a note when anything was left out.

    Within the limit the texts are whole. Beyond it, only the changed lines with
    ``CONTEXT_LINES`` around them (unchanged lines at both ends are dropped), and if the
    change itself is longer, its start. ACP's ``Diff`` has no line offset, so the note
    says where the shown part starts.
    """
    if len(new) <= limit and (old is None or len(old) <= limit):
        return [diff_content(path, new, old)]
    before = old.splitlines(keepends=True) if old is not None else []
    after = new.splitlines(keepends=True)
    same = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        same += 1
    tail = 0
    most = min(len(before), len(after)) - same
    while tail < most and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    first = max(same - CONTEXT_LINES, 0)
    skip_end = max(tail - CONTEXT_LINES, 0)
    old_text, old_cut = _head(before[first : len(before) - skip_end], limit)
    new_text, new_cut = _head(after[first : len(after) - skip_end], limit)
    item = diff_content(path, new_text, None if old is None else old_text)
    where = f"from line {first + 1:,} of {len(after):,}"
    if old_cut or new_cut:
        note = f"Diff cut at {limit:,} characters: the start of the change is shown, {where}."
    else:
        note = f"Only the changed lines are shown, {where}; the rest of the file is unchanged."
    return [item, text_content(note)]


def _head(lines: list[str], limit: int) -> tuple[str, bool]:
    """Whole lines of ``lines`` up to ``limit`` characters (a first longer line is cut)."""
    total = 0
    for count, line in enumerate(lines):
        if total + len(line) > limit:
            kept = "".join(lines[:count])
            return (kept if count else line[:limit]), True
        total += len(line)
    return "".join(lines), False


__all__ = ["CONTEXT_LINES", "bounded_diff"]

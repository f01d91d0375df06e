"""The pure rules: snapshot names, the windows outside a turn, retention."""

from __future__ import annotations

from pathlib import Path

from toolwire.checkpoints import Changes, conflicts, outside_windows, prompt_of, pruned


def test_the_windows_outside_a_turn() -> None:
    assert outside_windows(2, 4) == [
        ("after-2", "before-3"),
        ("after-3", "before-4"),
        ("after-4", None),
    ]
    assert outside_windows(3, 3) == [("after-3", None)]


def test_conflicts_are_every_file_changed_in_those_windows() -> None:
    a, b, c = Path("/p/a"), Path("/p/b"), Path("/p/c")
    windows = [Changes(modified=frozenset({a})), Changes(added=frozenset({b})), Changes()]
    assert conflicts(windows) == {a, b}
    assert conflicts([Changes(deleted=frozenset({c}))]) == {c}
    assert conflicts([]) == frozenset()


def test_retention_drops_whole_prompts_and_keeps_other_names() -> None:
    names = ["before-1", "after-1", "before-2", "after-2", "before-3", "undo"]
    assert pruned(names, keep=2) == ["after-1", "before-1"]
    assert pruned(names, keep=3) == []
    assert pruned(names, keep=0) == [n for n in sorted(names) if n != "undo"]
    assert prompt_of("before-12") == 12
    assert prompt_of("undo") is None

"""The switch notice's numbers: the session's whole tool work, and what goes on verbatim."""

from __future__ import annotations

from tests.handoff.support import CWD, Session
from toolwire.handoff import build_handoff, carried, describe_carried


def _work() -> Session:
    s = Session().user("read them")
    s.read("a.py", "A = 1\n").read("b.py", "B = 2\n").read("a.py", "A = 1\n")
    s.user("fix a.py")
    s.run("Edit", {"file_path": "a.py", "old_string": "1", "new_string": "3"}, "edited")
    s.user("check it").bash("echo 0", "0\n").bash("echo 1", "1\n")
    s.user("once more").bash("echo 2", "2\n")
    return s.say("Done.")


def test_everything_the_session_did_is_counted_even_when_the_block_is_empty() -> None:
    # No room for tool context: the block carries nothing, the tail the last command.
    made = build_handoff(_work().messages, cwd=CWD, max_tool_context_chars=0, keep_last=1)
    assert made.stats.files_read == 0  # what the block holds, the old notice's numbers
    counts = {c.category: (c.total, c.verbatim) for c in carried(made.items)}
    assert counts == {"read": (2, 0), "change": (1, 0), "command": (3, 1), "other": (0, 0)}
    assert describe_carried(made.items, summarized=True) == (
        "2 files read, summarized; 1 file changed, summarized; 3 commands, 1 verbatim, 2 summarized"
    )
    assert "left out" in describe_carried(made.items, summarized=False)


def test_a_file_read_again_is_one_file_and_kept_verbatim() -> None:
    made = build_handoff(_work().messages, cwd=CWD, keep_last=1)
    counts = {c.category: (c.total, c.verbatim) for c in carried(made.items)}
    # a.py was read twice: one file, carried by its latest read (the first is superseded).
    assert counts["read"] == (2, 2)
    assert [r.status for r in made.items if r.item.tool == "Read"] == ["dropped", "kept", "kept"]
    assert counts["change"] == (1, 1)
    assert counts["command"] == (3, 3)
    assert describe_carried([], summarized=True) == "no tool calls"

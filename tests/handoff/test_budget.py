"""Size: per-item caps cut head and tail, the total budget, newest first, stable order."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.handoff.support import CWD, Session, shown
from toolwire.handoff import build_handoff
from toolwire.handoff.budget import cut_middle
from toolwire.handoff.render import CLOSE, OPEN, SECTION_HEADINGS


def numbered(lines: int, tag: str = "") -> str:
    return "".join(f"{n:>6}\t{tag}line {n} of the file\n" for n in range(1, lines + 1))


def tool_context(block: str) -> str:
    """The tool sections of a block (between the summary, if any, and the close)."""
    start = block.index("## Files") if "## Files" in block else block.index("## ")
    return block[start : block.index(CLOSE)]


def test_cut_middle_keeps_head_and_tail_with_a_visible_marker() -> None:
    text = numbered(500)
    cut, omitted = cut_middle([text], 2000)
    assert len(cut) <= 2000
    assert cut.startswith("     1\tline 1 of the file\n")
    assert cut.endswith("   500\tline 500 of the file\n")
    assert f"[... {omitted} chars omitted ...]" in cut
    kept = cut.replace(f"\n[... {omitted} chars omitted ...]\n", "")
    assert len(kept) + omitted == len(text)
    assert text.startswith(cut.split("\n[...")[0])


def test_cut_middle_leaves_short_text_alone() -> None:
    assert cut_middle(["ab", "cd"], 4) == ("abcd", 0)


@given(st.lists(st.text(max_size=300), max_size=6), st.integers(min_value=60, max_value=800))
def test_cut_middle_never_exceeds_the_cap(parts: list[str], cap: int) -> None:
    cut, omitted = cut_middle(parts, cap)
    whole = "".join(parts)
    assert len(cut) <= cap
    if omitted == 0:
        assert cut == whole
    else:
        head, tail = cut.split(f"\n[... {omitted} chars omitted ...]\n")
        assert whole.startswith(head)
        assert whole.endswith(tail)
        assert len(head) + len(tail) + omitted == len(whole)


def test_each_item_capped_so_one_huge_file_cannot_crowd_out_the_others() -> None:
    s = Session().user("go").read("small.py", "small file\n").read("huge.py", numbered(200_000))
    s.read("other.py", "other file\n")
    handoff = build_handoff(
        s.messages,
        cwd=CWD,
        keep_last=0,
        summary=False,
        max_tool_context_chars=8000,
        max_tool_result_chars=2000,
    )
    assert [(r.item.label, r.status) for r in handoff.items] == [
        ("small.py", "kept"),
        ("huge.py", "truncated"),
        ("other.py", "kept"),
    ]
    huge = handoff.items[1]
    assert huge.omitted_chars > 1_000_000
    assert f"### Read: huge.py (truncated: {huge.omitted_chars} chars omitted)" in handoff.block
    assert "     1\tline 1 of the file" in handoff.block
    assert "200000\tline 200000 of the file" in handoff.block


@pytest.mark.parametrize("budget", [0, 150, 500, 1000, 3000, 7000, 20000])
def test_total_tool_context_within_budget(budget: int) -> None:
    s = Session().user("go")
    for i in range(12):
        s.read(f"f{i}.py", numbered(40 + i * 30, tag=f"f{i} "))
        s.bash(f"cat log{i}", numbered(20))
    handoff = build_handoff(
        s.messages, cwd=CWD, keep_last=0, summary=False, max_tool_context_chars=budget
    )
    context = tool_context(handoff.block) if shown(handoff) else ""
    assert len(context) <= budget
    headings = sum(len(h) for h in SECTION_HEADINGS.values() if h in context)
    assert sum(r.chars for r in handoff.items) + headings == len(context)


def test_newest_first_and_chronological_within_sections() -> None:
    s = Session().user("go")
    for i in range(6):
        s.read(f"f{i}.py", numbered(60, tag=f"f{i} "))
    handoff = build_handoff(
        s.messages,
        cwd=CWD,
        keep_last=0,
        summary=False,
        max_tool_context_chars=7000,
        max_tool_result_chars=2000,
    )
    statuses = [r.status for r in handoff.items]
    assert statuses[:2] == ["dropped", "dropped"]
    assert all(r.reason == "over_budget" for r in handoff.items[:2])
    assert set(statuses[2:]) <= {"kept", "truncated"}
    order = re.findall(r"### Read: (f\d)\.py", handoff.block)
    assert order == sorted(order)  # oldest shown first within the section


def test_smaller_older_items_still_fit_after_a_bigger_newer_one_did_not() -> None:
    s = Session().user("go").read("tiny.py", "tiny\n").read("big.py", numbered(100))
    handoff = build_handoff(
        s.messages,
        cwd=CWD,
        keep_last=0,
        summary=False,
        max_tool_context_chars=250,
        max_tool_result_chars=5000,
    )
    assert [r.status for r in handoff.items] == ["kept", "dropped"]
    assert "tiny" in handoff.block


def test_last_fitting_item_is_cut_to_the_room_left() -> None:
    s = Session().user("go").read("a.py", numbered(100, "a ")).read("b.py", numbered(100, "b "))
    handoff = build_handoff(
        s.messages,
        cwd=CWD,
        keep_last=0,
        summary=False,
        max_tool_context_chars=3000,
        max_tool_result_chars=2000,
    )
    a, b = handoff.items
    assert b.status == "truncated"
    assert a.status == "truncated"
    assert a.omitted_chars > b.omitted_chars
    assert len(tool_context(handoff.block)) <= 3000


def test_fences_outgrow_backticks_in_content() -> None:
    s = Session().user("go").read("README.md", "# T\n```python\nx\n```\n````\n")
    block = build_handoff(s.messages, cwd=CWD, keep_last=0, summary=False).block
    assert "\n`````\n# T\n```python" in block
    assert block.startswith(OPEN)

"""A -> B -> A at the library level: what A read before the first switch survives."""

from __future__ import annotations

import asyncio

from tests.handoff.support import CWD, ScriptedSummarizer, Session
from toolwire.handoff import MemorySummaryCache, build_handoff, prepare_handoff
from toolwire.history import Message, TextPart, ThinkingPart, ToolResultPart, user

DESIGN = "".join(f"{n:>6}\t## Section {n}: the design says {n * 7} things\n" for n in range(1, 245))


def no_thinking(messages: list[Message]) -> bool:
    return not any(isinstance(p, ThinkingPart) for m in messages for p in m.parts)


def on_a() -> Session:
    s = Session(backend="glm").user("Explore the project and read DESIGN.md.")
    s.say("Reading the design.", thinking="plan", signature="glm-sig")
    s.read("DESIGN.md", DESIGN).read("src/app.py", "def main():\n    pass\n")
    s.bash("git log --oneline", "abc123 init")
    s.say("DESIGN.md describes a proxy; summary follows.")
    return s


def continue_on_b(s: Session) -> None:
    s.backend = "claude"
    s.say("On Claude now.", thinking="b thinks", signature="claude-sig")
    s.run(
        "Edit", {"file_path": "src/app.py", "old_string": "pass", "new_string": "run()"}, "Edited"
    )
    s.bash("pytest -q", "3 passed")
    s.say("Edited app.py.")
    s.user("Anything else?").say("No.", thinking="done?", signature="claude-sig-2")


def test_a_to_b_to_a_keeps_the_file_verbatim() -> None:
    s = on_a()
    limits = {
        "cwd": CWD,
        "keep_last": 1,
        "max_tool_context_chars": 60_000,
        "max_tool_result_chars": 20_000,
    }
    to_b = build_handoff(s.messages, target="claude", **limits)  # type: ignore[arg-type]
    assert to_b.block == ""  # A's only turn is the last turn: it goes on verbatim
    s.user("Switched: now fix app.py.")
    sent_to_b = to_b.apply(s.messages)
    assert no_thinking(sent_to_b)
    assert ToolResultPart("call_1", "Read", DESIGN) in sent_to_b[3].parts
    continue_on_b(s)
    back_to_a = build_handoff(s.messages, target="glm", **limits)  # type: ignore[arg-type]
    assert DESIGN in back_to_a.block  # read on A, before the first switch, verbatim
    assert "### Read: src/app.py (stale: changed later by Edit)" in back_to_a.block
    assert "### Edit: src/app.py" in back_to_a.block
    assert "3 passed" in back_to_a.block
    s.user("Back on GLM: quote DESIGN.md line 244.")
    sent_to_a = back_to_a.apply(s.messages)
    assert no_thinking(sent_to_a)
    assert sent_to_a[-1] == user("Back on GLM: quote DESIGN.md line 244.")
    assert "   244\t## Section 244" in sent_to_a[0].text()


def test_with_default_caps_the_file_keeps_its_head_and_tail() -> None:
    s = on_a()
    continue_on_b(s)
    handoff = build_handoff(s.messages, target="glm", cwd=CWD, keep_last=1)
    (design,) = [r for r in handoff.items if r.item.label == "DESIGN.md"]
    assert design.status == "truncated"
    assert "     1\t## Section 1:" in handoff.block
    assert "   244\t## Section 244:" in handoff.block
    assert f"[... {design.omitted_chars} chars omitted ...]" in handoff.block


def test_repeated_switches_with_a_summarizer_call_it_once_per_switch() -> None:
    cache = MemorySummaryCache()
    backend = ScriptedSummarizer("A's work: read the design.", "B's work: edited app.py.")
    s = on_a()
    first = asyncio.run(
        prepare_handoff(s.messages, summarizer=backend, cache=cache, cwd=CWD, keep_last=0)
    )
    again = asyncio.run(
        prepare_handoff(s.messages, summarizer=backend, cache=cache, cwd=CWD, keep_last=0)
    )
    assert first.block == again.block
    assert len(backend.requests) == 1
    assert "A's work: read the design." in first.block
    assert DESIGN[:200] in first.block
    s.user("go on")
    continue_on_b(s)
    second = asyncio.run(
        prepare_handoff(s.messages, summarizer=backend, cache=cache, cwd=CWD, keep_last=1)
    )
    assert len(backend.requests) == 2
    assert "B's work: edited app.py." in second.block
    assert "     1\t## Section 1:" in second.block
    assert TextPart("go on") not in second.tail[0].parts  # "go on" is older than the last turn

"""The verbatim tail and where the block goes: valid for every provider."""

from __future__ import annotations

import pytest

from tests.handoff.support import CWD, Session
from toolwire.errors import UsageError
from toolwire.handoff import build_handoff
from toolwire.history import Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart, user
from toolwire.history.pairing import NOT_RUN, repair


def test_last_k_turns_verbatim_and_their_tools_not_repeated_in_the_block() -> None:
    s = Session().user("one").read("a.py", "A1").say("read a")
    s.user("two").read("b.py", "B1").say("read b")
    s.user("three").read("c.py", "C1").say("read c")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=2, summary=False)
    assert handoff.tail_start == 4
    assert list(handoff.tail) == s.messages[4:]
    assert [r.status for r in handoff.items] == ["kept", "tail", "tail"]
    assert "A1" in handoff.block
    assert "B1" not in handoff.block


def test_a_later_read_in_the_tail_supersedes_one_in_the_head() -> None:
    s = Session().user("one").read("a.py", "OLD").user("two").read("a.py", "NEW")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=1, summary=False)
    assert [(r.status, r.reason) for r in handoff.items] == [
        ("dropped", "superseded"),
        ("tail", None),
    ]


def test_fewer_turns_than_k_keeps_them_all() -> None:
    s = Session().user("one").say("hi")
    handoff = build_handoff(s.messages, keep_last=5)
    assert list(handoff.tail) == s.messages
    assert handoff.block == ""


def test_block_goes_first_in_the_first_user_message() -> None:
    s = Session().user("one").read("a.py", "A").user("two").say("ok")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=1)
    context = handoff.context()
    assert context[0].role == "user"
    assert context[0].parts == (TextPart(handoff.block), TextPart("two"))
    assert handoff.block.endswith("\n\n")


def test_with_no_tail_the_block_starts_the_next_prompt() -> None:
    s = Session().user("one").read("a.py", "A")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=0)
    assert handoff.tail == ()
    history = [*s.messages, user("next")]
    assert handoff.apply(history) == [Message("user", (TextPart(handoff.block), TextPart("next")))]
    assert handoff.context() == [Message("user", (TextPart(handoff.block),))]


def test_apply_adds_what_the_new_backend_said_after_the_switch() -> None:
    s = Session().user("one").read("a.py", "A").user("two")
    handoff = build_handoff(s.messages, cwd=CWD, keep_last=1)
    s.say("answer from b")
    context = handoff.apply(s.messages)
    assert context[-1] == s.messages[-1]
    assert handoff.apply(s.messages) == context  # the same bytes on every request
    with pytest.raises(UsageError):
        handoff.apply(s.messages[:2])


def test_switch_point_in_the_middle() -> None:
    s = Session().user("one").read("a.py", "A").user("two").read("b.py", "B")
    handoff = build_handoff(s.messages, switch_at=3, cwd=CWD, keep_last=0)
    assert "A" in handoff.block
    assert "b.py" not in handoff.block
    with pytest.raises(UsageError):
        build_handoff(s.messages, switch_at=99)
    with pytest.raises(UsageError):
        build_handoff(s.messages, keep_last=-1)


def test_thinking_never_crosses_and_signatures_are_not_invented() -> None:
    s = Session(backend="a").user("one").say("x", thinking="hmm", signature="sig-a")
    s.messages.append(
        Message("assistant", (ToolCallPart("c1", "Read", {"file_path": "a"}, "gsig"),), "a")
    )
    s.messages.append(Message("tool", (ToolResultPart("c1", "Read", "A"),)))
    to_b = build_handoff(s.messages, keep_last=1, target="b")
    assert not any(isinstance(p, ThinkingPart) for m in to_b.tail for p in m.parts)
    calls = [p for m in to_b.tail for p in m.parts if isinstance(p, ToolCallPart)]
    assert [c.signature for c in calls] == [None]  # a's signature is not b's to send
    back_to_a = build_handoff(s.messages, keep_last=1, target="a")
    calls = [p for m in back_to_a.tail for p in m.parts if isinstance(p, ToolCallPart)]
    assert [c.signature for c in calls] == ["gsig"]
    assert not any(isinstance(p, ThinkingPart) for m in back_to_a.tail for p in m.parts)


def test_thinking_only_message_disappears() -> None:
    s = Session().user("one")
    s.messages.append(Message("assistant", (ThinkingPart("t", "sig"),), "a"))
    handoff = build_handoff(s.messages, keep_last=1, target="b")
    assert list(handoff.tail) == [s.messages[0]]


def test_interrupted_call_in_the_tail_is_answered_as_every_request_answers_it() -> None:
    # One rule and one wording for a call that never returned (history.pairing): the
    # tail shows it as the requests before the handoff did, the call with a "not run"
    # error result, so the model reads the same turn the same way before and after.
    s = Session().user("one").run("Bash", {"command": "make"}, None)
    handoff = build_handoff(s.messages, keep_last=1)
    assert list(handoff.tail) == repair(s.messages)
    (assistant, results) = handoff.tail[1:]
    (call,) = assistant.tool_calls()
    assert (call.name, call.arguments) == ("Bash", {"command": "make"})
    assert results.parts == (ToolResultPart(call.id, "Bash", NOT_RUN, is_error=True),)


def test_partly_answered_calls_and_orphan_results() -> None:
    calls = (
        ToolCallPart("c1", "Read", {"file_path": "a"}),
        ToolCallPart("c2", "Read", {"file_path": "b"}),
    )
    messages = [
        user("go"),
        Message("assistant", calls, "a"),
        Message(
            "tool", (ToolResultPart("c2", "Read", "B"), ToolResultPart("zz", "Grep", "orphan"))
        ),
        Message("tool", (ToolResultPart("c9", "Bash", "lost", is_error=True),)),
    ]
    tail = build_handoff(messages, keep_last=1).tail
    assert [m.role for m in tail] == ["user", "assistant", "tool", "user"]
    assert tail[1].tool_calls() == list(calls)
    assert tail[2].parts == (
        ToolResultPart("c1", "Read", NOT_RUN, is_error=True),
        ToolResultPart("c2", "Read", "B"),
    )
    assert "Result of an earlier Grep call:\norphan" in tail[3].parts[0].text  # type: ignore[union-attr]
    assert "Result of an earlier Bash call (error):\nlost" in tail[3].parts[1].text  # type: ignore[union-attr]
    assert repair(tail) == list(tail)  # already what every provider accepts


def test_block_empty_when_nothing_precedes_the_tail() -> None:
    s = Session().user("one").read("a.py", "A")
    handoff = build_handoff(s.messages, keep_last=1)
    assert handoff.block == ""
    assert handoff.context() == list(handoff.tail)

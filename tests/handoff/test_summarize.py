"""The summary: a model call once per switch, cached, and the offline fallback."""

from __future__ import annotations

import asyncio

import pytest

from tests.handoff.support import CWD, ScriptedSummarizer, Session
from toolwire.errors import TransportError
from toolwire.handoff import MemorySummaryCache, Summary, history_digest, prepare_handoff, summarize
from toolwire.handoff.summarize import INSTRUCTIONS, transcript
from toolwire.history import Message, TextPart


def session() -> Session:
    s = Session().user("Make the parser faster.").say("I will profile it first.")
    s.read("parser.py", "SECRET FILE CONTENT\n" * 50)
    s.run("Edit", {"file_path": "parser.py", "old_string": "a", "new_string": "b"}, "Edited")
    s.bash("pytest -q", "FAILED test_parse - AssertionError\nmore", error=True)
    s.user("Keep going.").say("Done: 2x faster.")
    return s


def test_model_summary_used_and_asked_the_right_things() -> None:
    backend = ScriptedSummarizer("Task: faster parser.\nNext steps: none.")
    handoff = asyncio.run(
        prepare_handoff(session().messages, summarizer=backend, cwd=CWD, keep_last=1)
    )
    assert handoff.summary == Summary(
        "Task: faster parser.\nNext steps: none.", "llm", "fake/sum/summarizer-1"
    )
    assert "## Summary\n\nTask: faster parser.\nNext steps: none.\n\n## Files read" in handoff.block
    (request,) = backend.requests
    assert request.tools == ()
    assert "never call tools" in request.system
    prompt = request.messages[0].text()
    for heading in ("Task:", "Decisions:", "Files changed:", "Open problems:", "Next steps:"):
        assert heading in INSTRUCTIONS
        assert heading in prompt
    assert "[user]\nMake the parser faster." in prompt
    assert '-> Read {"file_path": "parser.py"}' in prompt
    assert "<- Bash failed: FAILED test_parse - AssertionError" in prompt
    assert "SECRET FILE CONTENT" not in prompt  # contents travel verbatim, not via the model
    assert "Keep going." not in prompt  # the tail is not summarized: it goes on verbatim


def test_computed_once_and_cached() -> None:
    cache = MemorySummaryCache()
    backend = ScriptedSummarizer("first answer", "second answer")
    messages = session().messages
    one = asyncio.run(prepare_handoff(messages, summarizer=backend, cache=cache, keep_last=1))
    two = asyncio.run(prepare_handoff(messages, summarizer=backend, cache=cache, keep_last=1))
    assert one.block == two.block
    assert len(backend.requests) == 1
    other = ScriptedSummarizer("other model", name="other")
    three = asyncio.run(prepare_handoff(messages, summarizer=other, cache=cache, keep_last=1))
    assert three.summary is not None
    assert three.summary.text == "other model"
    longer = [*messages, Message("user", (TextPart("more"),))]
    asyncio.run(prepare_handoff(longer, summarizer=backend, cache=cache, keep_last=1))
    assert len(backend.requests) == 2  # a different prefix is a different switch


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (None, "stream failed: connection reset"),
        (TransportError("HTTP 503"), "TransportError: HTTP 503"),
        ("   ", "returned no text"),
    ],
)
def test_failure_falls_back_to_extractive(answer: str | Exception | None, why: str) -> None:
    cache = MemorySummaryCache()
    backend = ScriptedSummarizer(answer, "recovered")
    handoff = asyncio.run(
        prepare_handoff(session().messages, summarizer=backend, cache=cache, cwd=CWD, keep_last=1)
    )
    assert handoff.summary is not None
    assert handoff.summary.source == "extractive"
    assert why in (handoff.summary.error or "")
    assert "Task (the user's first request):\nMake the parser faster." in handoff.block
    again = asyncio.run(
        prepare_handoff(session().messages, summarizer=backend, cache=cache, keep_last=1)
    )
    assert again.summary is not None
    assert again.summary.text == "recovered"


def test_timeout_falls_back() -> None:
    class Slow(ScriptedSummarizer):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            await asyncio.sleep(5)
            yield  # pragma: no cover

    handoff = asyncio.run(
        prepare_handoff(session().messages, summarizer=Slow(), timeout=0.01, keep_last=1)
    )
    assert handoff.summary is not None
    assert handoff.summary.error == "TimeoutError"


def test_extractive_summary_content() -> None:
    summary = asyncio.run(summarize(session().messages[:-2], None, cwd=CWD))
    assert summary.source == "extractive"
    assert summary.text.split("\n\n") == [
        "Task (the user's first request):\nMake the parser faster.",
        "Last assistant reply:\nI will profile it first.",
        "Files changed: parser.py (Edit)",
        "Errors seen (latest last):\n- Bash pytest -q: FAILED test_parse - AssertionError",
    ]


def test_empty_head_has_empty_summary_and_no_call() -> None:
    backend = ScriptedSummarizer()
    handoff = asyncio.run(
        prepare_handoff(Session().user("hi").messages, summarizer=backend, keep_last=1)
    )
    assert handoff.block == ""
    assert backend.requests == []


def test_include_summary_false() -> None:
    handoff = asyncio.run(prepare_handoff(session().messages, include_summary=False, keep_last=1))
    assert handoff.summary is None
    assert "## Summary" not in handoff.block


def test_transcript_keeps_the_first_message_and_the_newest_that_fit() -> None:
    s = Session()
    for i in range(50):
        s.user(f"request {i} " + "x" * 100)
    text = transcript(s.messages, 1000)
    assert text.startswith("[user]\nrequest 0 ")
    assert "request 49 " in text
    assert "request 10 " not in text
    assert "earlier messages left out" in text
    assert len(text) <= 1100


def test_digest_is_stable_and_sensitive() -> None:
    messages = session().messages
    assert history_digest(messages) == history_digest(list(messages))
    changed = [*messages[:-1], Message("assistant", (TextPart("Done: 3x faster."),), "a")]
    assert history_digest(changed) != history_digest(messages)
    assert history_digest([Message("user", (TextPart("ab"), TextPart("c")))]) != history_digest(
        [Message("user", (TextPart("a"), TextPart("bc")))]
    )

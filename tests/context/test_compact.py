"""Compaction: the handoff to the same backend, sized to its window."""

from __future__ import annotations

import itertools

import pytest

from tests.context.support import TASK, file_text, read_loop
from toolwire.backends.anthropic import build_body
from toolwire.backends.base import ModelRequest
from toolwire.context import Budget, build_compaction, plan_compaction, restore, window_for
from toolwire.context.compact import recent_start
from toolwire.context.tokens import estimate_messages
from toolwire.errors import UsageError
from toolwire.handoff import Summary, build_handoff, plan_handoff
from toolwire.history import Message, ToolCallPart, ToolResultPart, tool_results, user

WINDOW = window_for("small-model", context_window=24_000, max_output_tokens=2_048)
FIXED = 2_000


def _text(messages: list[Message]) -> str:
    out = []
    for message in messages:
        for part in message.parts:
            out.append(
                part.content if isinstance(part, ToolResultPart) else getattr(part, "text", "")
            )
    return "\n".join(out)


def test_forty_files_compact_under_the_limit_with_the_newest_file_and_the_task() -> None:
    history = read_loop(40)
    budget = Budget(WINDOW, FIXED)
    compaction = build_compaction(history, budget, cwd="/project", target="small")
    sent = compaction.handoff.apply(history)
    assert FIXED + estimate_messages(sent) <= 0.8 * WINDOW.room
    assert compaction.after_tokens < compaction.before_tokens / 4
    text = _text(sent)
    assert file_text(39) in text  # the file just read, verbatim
    assert TASK in text
    assert "Compacted" in compaction.describe()
    assert "files" in compaction.describe()


def test_the_same_history_gives_the_same_bytes() -> None:
    history = read_loop(30)
    one = build_compaction(history, Budget(WINDOW, FIXED), cwd="/project", target="small")
    two = build_compaction(list(history), Budget(WINDOW, FIXED), cwd="/project", target="small")
    request = ModelRequest(system="s", messages=tuple(one.handoff.apply(history)))
    again = ModelRequest(system="s", messages=tuple(two.handoff.apply(history)))
    assert build_body(request, model="m", backend="small") == build_body(
        again, model="m", backend="small"
    )


def test_the_request_after_a_compaction_alternates_roles_for_anthropic() -> None:
    history = read_loop(20)
    compaction = build_compaction(history, Budget(WINDOW, FIXED), target="small")
    assert history[compaction.handoff.tail_start].role == "assistant"  # cut inside the turn
    body = build_body(
        ModelRequest(system="s", messages=tuple(compaction.handoff.apply(history))),
        model="m",
        backend="small",
    )
    roles = [m["role"] for m in body["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_a_stored_compaction_rebuilds_byte_for_byte() -> None:
    history = read_loop(25)
    compaction = build_compaction(history, Budget(WINDOW, FIXED), target="small")
    later = [*history, user("and now the tests")]
    rebuilt = restore(later, compaction.point("small"))
    assert rebuilt.apply(later) == compaction.handoff.apply(later)
    with pytest.raises(UsageError):
        restore(history[:10], compaction.point("small"))


def test_one_result_bigger_than_the_window_is_cut_and_named() -> None:
    history = [
        user(TASK),
        Message("assistant", (ToolCallPart("c", "Bash", {"command": "cat big.log"}),), "small"),
        tool_results([ToolResultPart("c", "Bash", "x" * 400_000 + "THE END")]),
    ]
    compaction = build_compaction(history, Budget(WINDOW, FIXED), target="small")
    sent = compaction.handoff.apply(history)
    assert FIXED + estimate_messages(sent) <= 0.8 * WINDOW.room
    assert "chars omitted" in _text(sent)
    assert "THE END" in _text(sent)
    assert compaction.oversized == ("the Bash result of cat big.log (400007 chars)",)
    assert "cut the Bash result of cat big.log" in compaction.describe()


def test_the_verbs_mean_what_they_mean_for_a_handoff() -> None:
    # plan_*: everything but the summary, finished later; build_*: done, offline.
    history = read_loop(30)
    budget = Budget(WINDOW, FIXED)
    planned = plan_compaction(history, budget, target="small")
    assert planned.extractive() == build_compaction(history, budget, target="small")
    handoff_plan = plan_handoff(history, keep_last=1)
    assert handoff_plan.finish(None) == build_handoff(history, keep_last=1, summary=False)


def test_a_short_conversation_has_nothing_to_compact() -> None:
    planned = plan_compaction(read_loop(1), Budget(WINDOW, FIXED))
    assert planned.empty


def test_the_focus_and_the_users_own_words_survive_a_model_summary() -> None:
    history = read_loop(30)
    planned = plan_compaction(history, Budget(WINDOW, FIXED), focus="  the parser  ")
    compaction = planned.finish(Summary("The assistant read files.", "llm", "anthropic/x/m"))
    assert compaction.summary_text.startswith("Focus the user asked for: the parser")
    assert TASK in compaction.summary_text
    assert compaction.summary_text.endswith("The assistant read files.")


def test_the_tail_starts_at_a_step_and_keeps_at_least_one() -> None:
    history = read_loop(10)
    start = recent_start(history, len(history), tokens=1)
    assert start == len(history) - 2
    assert history[start].role == "assistant"
    assert recent_start(history, len(history), tokens=10**9) == 0
    for tokens in range(0, 30_000, 997):
        assert history[recent_start(history, len(history), tokens)].role != "tool"

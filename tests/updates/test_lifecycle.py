"""The tool-call stage machine: the table is the law, everything else raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.errors import LifecycleError
from toolwire.events import ToolCallDelta, ToolCallEnd
from toolwire.updates.lifecycle import (
    CANCELLED_OUTPUT,
    TRANSITIONS,
    Action,
    Arguments,
    Stage,
    ToolCallLifecycle,
)
from toolwire.updates.wire import text_content

CWD = "/p"
ACTIONS: tuple[Action, ...] = get_args(Action)


def _call(name: str = "Read") -> ToolCallLifecycle:
    return ToolCallLifecycle("call_1", name, cwd=CWD)


def _do(call: ToolCallLifecycle, action: Action) -> bool:
    """Perform ``action`` with plausible arguments."""
    perform: dict[Action, Callable[[], bool]] = {
        "delta": lambda: call.delta(ToolCallDelta("call_1", '{"a')),
        "input": lambda: call.end_arguments(ToolCallEnd("call_1", {"file_path": "a.py"})),
        "content": lambda: call.set_content([text_content("diff")]),
        "run": call.run,
        "output": lambda: call.output("line\n"),
        "complete": lambda: call.complete("done"),
        "fail": lambda: call.fail("boom"),
        "cancel": call.cancel,
    }
    return perform[action]()


# How to reach each (stage, arguments) pair with legal moves.
PATHS: dict[tuple[Stage, Arguments], tuple[Action, ...]] = {
    ("start", "partial"): (),
    ("streaming", "partial"): ("delta",),
    ("streaming", "final"): ("delta", "input"),
    ("running", "final"): ("input", "run"),
    ("end", "final"): ("input", "run", "complete"),
    ("end", "partial"): ("fail",),
}


@pytest.mark.parametrize("where", list(PATHS))
@pytest.mark.parametrize("action", ACTIONS)
def test_every_move_follows_the_table(where: tuple[Stage, Arguments], action: Action) -> None:
    call = _call()
    for step in PATHS[where]:
        _do(call, step)
    assert call.stage == where[0]
    expected = TRANSITIONS.get((where[0], where[1], action))
    if expected is None:
        before = call.snapshot()
        with pytest.raises(LifecycleError):
            _do(call, action)
        assert call.stage == where[0]
        assert call.snapshot() is before, "an illegal move must not change the state"
    else:
        _do(call, action)
        assert call.stage == expected


def test_end_is_final_and_only_from_an_open_stage() -> None:
    ends = {key for key, stage in TRANSITIONS.items() if stage == "end"}
    assert all(key[0] != "end" for key in TRANSITIONS)
    assert {key[2] for key in ends} == {"complete", "fail", "cancel"}


@given(st.lists(st.sampled_from(ACTIONS), max_size=12))
def test_random_sequences_move_exactly_as_the_table_says(actions: list[Action]) -> None:
    call = _call()
    stage: Stage = "start"
    args: Arguments = "partial"
    for action in actions:
        expected = TRANSITIONS.get((stage, args, action))
        if expected is None:
            with pytest.raises(LifecycleError):
                _do(call, action)
            continue
        _do(call, action)
        stage, args = expected, "final" if action == "input" else args
        assert call.stage == stage
    status = call.snapshot().status
    assert status == {"start": "pending", "streaming": "pending", "running": "in_progress"}.get(
        stage, status
    )


def test_title_refines_as_soon_as_its_field_completes() -> None:
    call = _call("Edit")
    assert (call.snapshot().title, call.snapshot().kind) == ("Edit file", "edit")
    assert call.delta(ToolCallDelta("call_1", '{"file_pa')) is False
    first = call.snapshot()
    changed = call.delta(
        ToolCallDelta("call_1", 'th": "src/a.py", ', ("file_path",), ("src/a.py",))
    )
    assert changed is True
    state = call.snapshot()
    assert state.title == "Edit src/a.py"
    assert state.locations == ({"path": "/p/src/a.py"},)
    assert state.raw_input is None, "rawInput waits for the complete arguments"
    assert (
        call.delta(ToolCallDelta("call_1", '"old_string": "x"', ("old_string",), ("x",))) is False
    )
    assert call.snapshot() is state is not first


def test_raw_input_is_set_once_when_the_arguments_end() -> None:
    call = _call("Bash")
    call.delta(ToolCallDelta("call_1", '{"command": "ls"}', ("command",), ("ls",)))
    args = {"command": "ls", "timeout": 5}
    assert call.end_arguments(ToolCallEnd("call_1", args)) is True
    state = call.snapshot()
    assert (state.title, state.status, state.raw_input) == ("ls", "pending", args)


@pytest.mark.parametrize("arguments", ["", None])
def test_empty_arguments_are_an_empty_object(arguments: Any) -> None:
    call = _call("get_time")
    call.end_arguments(ToolCallEnd("call_1", arguments))
    assert call.snapshot().raw_input == {}


def test_unparseable_or_cut_arguments_end_the_call_failed() -> None:
    call = _call("Write")
    call.delta(
        ToolCallDelta("call_1", '{"file_path": "n.md", "content": "ab', ("file_path",), ("n.md",))
    )
    call.end_arguments(ToolCallEnd("call_1", error="cut by max_tokens", raw='{"file_path"...'))
    state = call.snapshot()
    assert call.stage == "end"
    assert state.status == "failed"
    assert state.raw_output == {"error": "cut by max_tokens"}
    assert state.raw_input == {"file_path": "n.md"}, "what was known of the input"
    assert "cut by max_tokens" in state.content[0]["content"]["text"]
    with pytest.raises(LifecycleError):
        call.run()


def test_cancel_ends_failed_saying_cancelled() -> None:
    call = _call("Bash")
    call.end_arguments(ToolCallEnd("call_1", {"command": "sleep 100"}))
    call.run()
    call.output("started\n")
    call.cancel()
    state = call.snapshot()
    assert state.status == "failed"
    assert state.raw_output == CANCELLED_OUTPUT
    assert state.content == (text_content("started\n"),), "output so far is kept"


def test_running_output_is_a_bounded_tail_rendered_lazily() -> None:
    call = ToolCallLifecycle("call_1", "Bash", cwd=CWD, tail_bytes=100, result_bytes=1000)
    call.end_arguments(ToolCallEnd("call_1", {"command": "yes"}))
    call.run()
    for i in range(10_000):
        call.output(f"line {i}\n")
    text = call.snapshot().content[0]["content"]["text"]
    assert text.startswith("[")
    assert "earlier bytes not shown]\n" in text
    assert text.endswith("line 9999\n")
    assert len(text.split("]\n", 1)[1]) <= 100
    assert call.snapshot() is call.snapshot(), "rendered once until new output arrives"
    call.complete()
    result = call.snapshot().content[0]["content"]["text"]
    assert result.startswith("line 0\n")
    assert result.endswith("line 9999\n")
    assert "bytes not shown: output capped at 1,000 bytes" in result
    assert len(result.encode()) < 1100


def test_complete_with_a_result_caps_it_and_keeps_raw_output() -> None:
    call = ToolCallLifecycle("call_1", "Read", cwd=CWD, result_bytes=64)
    call.end_arguments(ToolCallEnd("call_1", {"file_path": "a"}))
    call.run()
    call.complete("x" * 1000, raw_output={"lines": 1})
    state = call.snapshot()
    assert state.status == "completed"
    assert state.raw_output == {"lines": 1}
    assert len(state.content[0]["content"]["text"]) < 150


def test_fail_keeps_output_and_adds_the_error() -> None:
    call = _call("Bash")
    call.end_arguments(ToolCallEnd("call_1", {"command": "false"}))
    call.run()
    call.output("oops\n")
    call.fail("exit status 1")
    state = call.snapshot()
    assert [c["content"]["text"] for c in state.content] == ["oops\n", "exit status 1"]
    assert state.raw_output == {"error": "exit status 1"}

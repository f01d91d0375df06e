"""Growing output under replace semantics: bounded frames, capped result, <= 3x N bytes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.acp_check import check, replay, validating
from toolwire.config.choices import Profile
from toolwire.events import ToolCallEnd
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.output import DEFAULT_TAIL_BYTES, OutputWindow, cap_text
from toolwire.updates.wire import Notification


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


MB = 1_000_000


def _run_command(
    pieces: list[bytes], step: float, profile: Profile = "minimal"
) -> tuple[int, list[Notification]]:
    engine = UpdateEngine("sess_o", profile=profile)
    call = ToolCallLifecycle("call_1", "Bash", cwd="/p")
    notes = engine.start(call, now=0.0)
    call.end_arguments(ToolCallEnd("call_1", {"command": "make"}))
    call.run()
    notes += engine.update(call, now=0.0)
    now = 0.0
    for piece in pieces:
        now += step
        call.output(piece)
        notes += engine.update(call, now=now)
    call.complete(raw_output={"exit_code": 0})
    notes += engine.update(call, now=now)
    return sum(len(n.line) for n in notes), notes


@pytest.mark.slow
@pytest.mark.parametrize(
    ("piece", "step"),
    [
        (4096, 0.001),  # fast: 4 KB every ms
        (4096, 0.06),  # every piece lands after the interval: one frame each
        (100, 0.06),  # a slow trickle: each frame would re-send 4 KB for 100 new bytes
        (1, 0.0),  # byte by byte, all at once
    ],
)
def test_a_tool_printing_n_bytes_costs_at_most_3n(piece: int, step: float) -> None:
    total = MB if piece > 1 else 200_000
    line = b"building target 0123456789 \xe2\x9c\x93 ok\n"
    data = (line * (total // len(line) + 1))[:total]
    pieces = [data[i : i + piece] for i in range(0, len(data), piece)]
    for profile in ("minimal", "full"):
        sent, notes = _run_command(pieces, step, profile)
        if total >= MB:
            assert sent <= 3 * total, f"{profile}: {sent} bytes for {total}"
    check(notes[:3] + notes[-3:])
    final = replay(notes)["call_1"]
    text = final["content"][0]["content"]["text"]
    assert final["status"] == "completed"
    assert "bytes not shown: output capped at" in text
    assert text.endswith(data[-100:].decode("utf-8", "ignore"))


def test_frames_while_running_show_a_tail_with_what_was_hidden() -> None:
    _, notes = _run_command([b"x" * 4096] * 20, 0.06)
    frames = [n for n in notes if n.update.get("content") and n.update.get("status") is None]
    assert len(frames) >= 10
    text = frames[-1].update["content"][0]["content"]["text"]
    first_line, tail = text.split("\n", 1)
    assert first_line.endswith("earlier bytes not shown]")
    assert len(tail) == DEFAULT_TAIL_BYTES


@settings(max_examples=200)
@given(st.binary(max_size=300), st.integers(2, 120))
def test_cap_text_keeps_head_and_tail_and_says_how_much_was_cut(data: bytes, limit: int) -> None:
    text = cap_text(data, limit)
    if len(data) <= limit:
        assert text == data.decode("utf-8", "replace")
        return
    head, rest = text.split("\n[", 1)
    cut = int(rest.split(" bytes not shown", 1)[0].replace(",", ""))
    tail = rest.split("]\n", 1)[1]
    shown = len(head.encode()) + len(tail.encode())
    assert cut >= len(data) - shown - 6  # replacement characters may differ in size
    assert len(head.encode()) + len(tail.encode()) <= limit * 3


@given(st.lists(st.binary(max_size=50), max_size=40), st.integers(1, 60), st.integers(2, 100))
def test_the_window_result_equals_capping_the_whole_output(
    pieces: list[bytes], tail: int, result: int
) -> None:
    window = OutputWindow(tail, result)
    for piece in pieces:
        window.append(piece)
    assert window.result_text() == cap_text(b"".join(pieces), result)
    assert window.total == sum(map(len, pieces))

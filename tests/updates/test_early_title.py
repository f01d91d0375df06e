"""The early title: a refined title, kind or location reaches the editor at once.

While a Write's content streams (seconds for a large file) the card must already read
"Write src/a.py", whether the stream arrives in many reads or in one: a refinement is a
first-class change, like a status change, never held by the throttle (docs/updates.md,
"Throttling and ordering").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.acp_check import check, replay, validating
from tests.helpers import cut_points, split_at
from tests.proxy.support import anthropic_stream
from toolwire.decode import decoder_for
from toolwire.updates.engine import UpdateEngine
from toolwire.updates.translate import ResponseTranslator
from toolwire.updates.wire import Notification, ToolCallState, location, text_content


@pytest.fixture(autouse=True, scope="module")
def _every_notification_is_checked() -> Iterator[None]:
    with validating():
        yield


CONTENT = "".join(f"print({n})\n" for n in range(200))
WRITE = {"file_path": "/proj/src/a.py", "content": CONTENT}
STREAM = b"".join(
    anthropic_stream(
        [
            {"type": "text", "text": "Writing it."},
            {"type": "tool_use", "id": "toolu_w", "name": "Write", "input": WRITE},
        ],
        "tool_use",
    )
)


def _translate(pieces: list[bytes], steps: list[float] | None = None) -> list[Notification]:
    """Decode and translate ``pieces``; after every event the card's title, kind and
    locations on the client are those of the lifecycle (nothing refined is held)."""
    engine = UpdateEngine("sess_t", interval=0.05, clock=lambda: 0.0)
    turn = ResponseTranslator(engine, cwd="/proj")
    decoder = decoder_for("anthropic")
    notes: list[Notification] = []
    now = 0.0
    for n, piece in enumerate([*pieces, b""]):
        events = decoder.feed(piece) if piece else decoder.close()
        for event in events:
            notes += turn.feed(event, now=now)
            for call_id, call in turn.calls.items():
                held = engine.client_state(call_id)
                assert (held.title, held.kind, held.locations) == (
                    call.title,
                    call.kind,
                    call.locations,
                ), f"refinement of {call_id} held after a {type(event).__name__}"
        now += steps[n % len(steps)] if steps else 0.0
        notes += engine.poll(now)
    return check(notes + turn.close(now))


def _calls(notes: list[Notification]) -> list[dict[str, Any]]:
    return [dict(n.update) for n in notes if n.tool_call_id == "toolu_w"]


def test_a_write_read_in_one_piece_shows_its_title_before_its_content() -> None:
    start, refined, final = _calls(_translate([STREAM]))
    assert start["sessionUpdate"] == "tool_call"
    assert start["title"] == "Write file"
    assert refined == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_w",
        "title": "Write src/a.py",
        "locations": [{"path": "/proj/src/a.py"}],
    }
    assert final == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_w",
        "rawInput": WRITE,
    }


@settings(max_examples=80, deadline=None)
@given(
    cut_points(len(STREAM)),
    st.lists(st.sampled_from([0.0, 0.001, 0.02, 0.07]), min_size=1, max_size=5),
)
def test_any_reads_at_any_pace_refine_the_title_at_once(
    cuts: list[int], steps: list[float]
) -> None:
    notes = _translate(split_at(STREAM, cuts), steps)
    assert replay(notes)["toolu_w"]["title"] == "Write src/a.py"
    raw = next(i for i, u in enumerate(_calls(notes)) if "rawInput" in u)
    assert "title" not in _calls(notes)[raw], "the title went out before the final input"


@given(cut_points(len(STREAM)))
@settings(max_examples=40, deadline=None)
def test_without_a_clock_the_updates_do_not_depend_on_read_boundaries(cuts: list[int]) -> None:
    whole = [n.line for n in _translate([STREAM])]
    assert [n.line for n in _translate(split_at(STREAM, cuts))] == whole


@dataclass(frozen=True)
class Opaque:
    """A source with only what ``CallSource`` requires (no title/kind/locations)."""

    state: ToolCallState

    @property
    def tool_call_id(self) -> str:
        return self.state.tool_call_id

    @property
    def status(self) -> str:
        return self.state.status

    def snapshot(self) -> ToolCallState:
        return self.state


CARD = st.tuples(
    st.sampled_from(["Write file", "Write a.py", "Write b.py"]),
    st.sampled_from(["edit", "other"]),
    st.lists(st.builds(location, st.sampled_from(["/p/a.py", "/p/b.py"])), max_size=1),
)


@settings(max_examples=40, deadline=None)
@given(
    st.booleans(),
    st.lists(st.tuples(CARD, st.booleans(), st.sampled_from([0.0, 0.01, 0.06])), max_size=12),
)
def test_the_engine_never_holds_a_refinement(opaque: bool, steps: list[Any]) -> None:
    """Any source, any pace: after ``update`` the client holds the current title, kind
    and locations; at the end, everything (content frames too) has reached it."""
    engine = UpdateEngine("sess_t", interval=0.05, clock=lambda: 0.0)
    state = ToolCallState("c", "Write file", "edit")
    now, frame = 0.0, 0
    engine.start(state, now=now)
    for (title, kind, locations), progress, advance in steps:
        now += advance
        engine.poll(now)
        state = state.replace(title=title, kind=kind, locations=locations)
        if progress:
            frame += 1
            state = state.replace(content=(text_content(f"{frame}"),))
        check(engine.update(Opaque(state) if opaque else state, now=now))
        held = engine.client_state("c")
        assert (held.title, held.kind, held.locations) == (title, kind, tuple(locations))
    check(engine.flush(now))
    assert engine.client_state("c") == state

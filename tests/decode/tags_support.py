"""Helpers for the tests of the text-format decoders (``toolwire.decode.tags``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tests.helpers import Feedable, check_invariants, feed_pieces, split_at
from toolwire.events import (
    Event,
    StreamError,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

Factory = Callable[[], Feedable]


def merge_adjacent(events: Iterable[Event]) -> list[Event]:
    """Merge adjacent ``TextDelta``s, and adjacent ``ToolCallDelta``s of one call.

    Text formats emit text in the pieces they were fed, so only the merged form is the
    same in every chunking. Merged deltas keep every field and value, in order.
    """
    out: list[Event] = []
    for ev in events:
        prev = out[-1] if out else None
        if isinstance(ev, TextDelta) and isinstance(prev, TextDelta):
            out[-1] = TextDelta(prev.text + ev.text)
        elif isinstance(ev, ToolCallDelta) and isinstance(prev, ToolCallDelta) and prev.id == ev.id:
            fields, values = prev.fields + ev.fields, prev.values + ev.values
            out[-1] = ToolCallDelta(ev.id, prev.text + ev.text, fields, values)
        else:
            out.append(ev)
    return out


def decode(factory: Factory, pieces: Iterable[str]) -> list[Event]:
    events = feed_pieces(factory(), pieces)
    check_calls(events)
    return events


def decode_whole(factory: Factory, text: str) -> list[Event]:
    return decode(factory, [text])


def decode_split(factory: Factory, text: str, cuts: Iterable[int]) -> list[Event]:
    return decode(factory, split_at(text, cuts))


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def check_calls(events: Sequence[Event]) -> None:
    """Per call: one start, deltas while open, one end; no ``MessageEnd`` from these."""
    check_invariants(events, message_end=False)


def text_of(events: Iterable[Event]) -> str:
    return "".join(ev.text for ev in events if isinstance(ev, TextDelta))


def calls_of(events: Iterable[Event]) -> list[tuple[str, Any]]:
    """``(name, arguments)`` per call, ``(name, ToolCallEnd)`` when the call failed."""
    names: dict[str, str] = {}
    out: list[tuple[str, Any]] = []
    for ev in events:
        if isinstance(ev, ToolCallStart):
            names[ev.id] = ev.name
        elif isinstance(ev, ToolCallEnd):
            out.append((names[ev.id], ev.arguments if ev.ok else ev))
    return out


def ends_of(events: Iterable[Event]) -> list[ToolCallEnd]:
    return [ev for ev in events if isinstance(ev, ToolCallEnd)]


def errors_of(events: Iterable[Event]) -> list[StreamError]:
    return [ev for ev in events if isinstance(ev, StreamError)]


def deltas_text(events: Iterable[Event], call_id: str) -> str:
    return "".join(ev.text for ev in events if isinstance(ev, ToolCallDelta) and ev.id == call_id)


def fields_of(events: Iterable[Event]) -> list[str]:
    return [f for ev in events if isinstance(ev, ToolCallDelta) for f in ev.fields]


def field_values(events: Iterable[Event]) -> dict[str, Any]:
    """Each completed field with the value its delta carried."""
    out: dict[str, Any] = {}
    for ev in events:
        if isinstance(ev, ToolCallDelta):
            assert len(ev.values) == len(ev.fields), "one value per completed field"
            out.update(zip(ev.fields, ev.values, strict=True))
    return out


def assert_same_in_any_chunking(factory: Factory, text: str, cuts: Iterable[int] = ()) -> None:
    """Whole, char by char and at ``cuts``: the same events once adjacent deltas merge."""
    whole = merge_adjacent(decode_whole(factory, text))
    assert merge_adjacent(decode(factory, list(text))) == whole
    assert merge_adjacent(decode_split(factory, text, cuts)) == whole


def start_chunk(factory: Factory, text: str, last: int) -> None:
    """Feeding up to ``text[last]`` exclusive starts no call; that one character does."""
    decoder = factory()
    before = decoder.feed(text[:last])
    assert not [ev for ev in before if isinstance(ev, ToolCallStart)]
    after = decoder.feed(text[last])
    assert [ev for ev in after if isinstance(ev, ToolCallStart)], "no start on the name's end"


def assert_no_markup_leak(factory: Factory, text: str) -> None:
    """For an input whose visible text has no ``<``: no text event ever carries one.

    Fed char by char, so every tag is split at every point at least once.
    """
    decoder = factory()
    for ch in text:
        for ev in decoder.feed(ch):
            if isinstance(ev, TextDelta):
                assert "<" not in ev.text, f"markup leaked as text: {ev.text!r}"
    for ev in decoder.close():
        if isinstance(ev, TextDelta):
            assert "<" not in ev.text, f"markup leaked as text: {ev.text!r}"

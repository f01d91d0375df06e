"""The negative corpus (``tests/decode/negative``): no text format makes a false call.

Every text of the corpus goes to every text format's decoder, with the corpus's tools
declared, whole, byte by byte and in random chunks. A false call is a call that ends
normally (so it would run) and names a declared tool: what the rescue of leaked calls
(docs/decoding.md) may act on. Calls of undeclared tools in the formats that take any name
after a special token (documentation's ``get_weather``, ``NAME``) are counted apart: the
rescue ignores them, and a backend that uses the format reports them to the model as
unknown tools.

Formats join by their name in ``toolwire.decode``'s registry (``TEXT_FORMATS``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

import pytest

from tests.decode.negative.corpus import TOOLS, WHOLE_CALLS, corpus
from tests.helpers import feed_pieces, split_at
from toolwire.decode import TEXT_FORMATS, Decoder, decoder_for
from toolwire.events import Event, ToolCallEnd, ToolCallStart

FORMATS: dict[str, Callable[[], Decoder]] = {
    name: partial(decoder_for, name, TOOLS) for name in TEXT_FORMATS
}


def _ok_calls(events: list[Event]) -> list[str]:
    names = {ev.id: ev.name for ev in events if isinstance(ev, ToolCallStart)}
    return [names[ev.id] for ev in events if isinstance(ev, ToolCallEnd) and ev.ok]


def _chunkings(data: bytes, seed: int) -> list[list[bytes]]:
    rng = random.Random(seed)
    ways = [[data], [data[i : i + 1] for i in range(len(data))]]
    for _ in range(3):
        ways.append(split_at(data, rng.sample(range(1, len(data)), min(len(data) - 1, 25))))
    return ways


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_no_false_call_in_the_negative_corpus(fmt: str) -> None:
    false: dict[str, list[str]] = {}
    for n, (label, text) in enumerate(corpus().items()):
        for pieces in _chunkings(text.encode(), seed=n):
            called = _ok_calls(feed_pieces(FORMATS[fmt](), pieces))
            declared = [name for name in called if name in TOOLS]
            if declared:
                false.setdefault(label, declared)
    assert not false, f"{fmt}: {len(false)} texts made false calls: {false}"


@pytest.mark.parametrize("fmt", sorted(set(FORMATS) & set(WHOLE_CALLS)))
def test_the_corpus_calls_are_real_calls_before_they_are_cut(fmt: str) -> None:
    # So that a cut call tests something: uncut, its own format reads it.
    events = feed_pieces(FORMATS[fmt](), [WHOLE_CALLS[fmt].encode()])
    ends = [ev for ev in events if isinstance(ev, ToolCallEnd)]
    assert [ev.arguments for ev in ends] == [
        {"file_path": "a.py", "content": "print(1)\nprint(2)\n"}
    ]

"""The contract every wire-format decoder meets on every recorded stream, in one place.

``chunking_contract`` builds the test functions; a decoder's test module binds them to
module-level ``test_*`` names so pytest collects them there:

* whole and byte-by-byte feeding give the same events, and the invariants hold;
* any random split gives the same events (Hypothesis);
* the events equal the reviewed snapshot ``tests/decode/snapshots/decode_<name>.jsonl``;
* the other line endings SSE allows decode the same;
* a body cut anywhere still starts and ends every call once, with one ``message_end``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import (
    HAS_SHARED,
    RECORDED_NAMES,
    Feedable,
    assert_snapshot,
    check_invariants,
    cut_points,
    decode_ways,
    feed_pieces,
    needs_shared,
    split_at,
)

Test = Callable[..., None]


def chunking_contract(
    factory: Callable[[], Feedable],
    data_of: Callable[[str], bytes],
    names: Iterable[str],
    reframings: Iterable[tuple[bytes, bytes]],
) -> tuple[Test, Test, Test, Test, Test]:
    """Tests for ``factory``'s decoder over the streams ``names`` (bodies from ``data_of``).

    ``reframings`` are (old, new) line-end replacements that must not change the events.
    """
    streams = sorted(names)
    frames = [(name, old, new) for name in streams for old, new in reframings]

    def decode(data: bytes) -> list[Any]:
        return feed_pieces(factory(), [data])

    @pytest.mark.parametrize("name", streams)
    def whole_and_bytewise(name: str) -> None:
        ways = decode_ways(factory, data_of(name))
        assert ways["bytewise"] == ways["whole"]
        check_invariants(ways["whole"])

    @pytest.mark.parametrize("name", streams)
    @settings(max_examples=40, deadline=None)
    @given(draw=st.data())
    def any_split(name: str, draw: st.DataObject) -> None:
        data = data_of(name)
        cuts = draw.draw(cut_points(len(data)))  # anywhere in this body, however long
        assert feed_pieces(factory(), split_at(data, cuts)) == decode(data)

    @pytest.mark.parametrize("name", streams)
    def snapshot(name: str) -> None:
        assert_snapshot(f"decode_{name}", decode(data_of(name)))

    @pytest.mark.parametrize(("name", "old", "new"), frames)
    def other_line_ends(name: str, old: bytes, new: bytes) -> None:
        data = data_of(name)
        assert decode(data.replace(old, new)) == decode(data)

    # One test over every stream: the recordings in ../shared join the pool only where it
    # is present (the test is then marked), so a bare clone still cuts this repo's own.
    recorded = {name.rsplit(".", 1)[0] for name in RECORDED_NAMES}
    pool = [name for name in streams if HAS_SHARED or name not in recorded]

    @settings(max_examples=60, deadline=None)
    @given(data=st.data())
    def cut_anywhere(data: st.DataObject) -> None:
        body = data_of(data.draw(st.sampled_from(pool)))
        cut = data.draw(st.integers(min_value=0, max_value=len(body)))
        check_invariants(decode(body[:cut]))

    if recorded & set(pool):
        cut_anywhere = needs_shared(cut_anywhere)
    return whole_and_bytewise, any_split, snapshot, other_line_ends, cut_anywhere

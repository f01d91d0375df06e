"""Shared test helpers: feed decoders in any chunking, check invariants, snapshots."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import pytest
from hypothesis import strategies as st

from toolwire.events import (
    Event,
    MessageEnd,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    event_to_dict,
)

TESTS = Path(__file__).parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
"""Streams this project wrote."""
SNAPSHOTS = TESTS / "decode" / "snapshots"
SHARED_VARIABLE = "TOOLWIRE_SHARED"
"""``none`` hides ``../shared`` (as a bare clone sees the suite); a path stands in for it."""


def _shared_dir() -> Path:
    chosen = os.environ.get(SHARED_VARIABLE, "")
    if chosen.lower() == "none":
        # A path that can never exist: a test that reads under it without the marker fails
        # loudly in the hidden pass instead of finding the real copy.
        return Path(os.devnull) / "shared"
    return Path(chosen) if chosen else REPO.parent / "shared"


SHARED = _shared_dir()
"""Recordings from other projects' test suites, kept beside the repository, not in it."""
HAS_SHARED = SHARED.is_dir()
MARK = "shared"
"""The marker of a test that needs ``SHARED``: it skips at collection when that is absent."""
RECORDED = SHARED / "fixtures"
RECORDED_NAMES = (
    "anthropic_incomplete_partial_json.sse",
    "anthropic_tool_use.sse",
    "gemini_function_call.jsonl",
    "openai_chat_parallel_tool_calls.sse",
    "openai_responses_function_call.jsonl",
    "vertex_stream_function_call_partial_args.jsonl",
)
"""The recordings the tests use (listed, so that their tests skip rather than vanish)."""
CONFORMANCE = SHARED / "conformance"


needs_shared = pytest.mark.shared
"""For a test (or one ``pytest.param``) that reads under ``SHARED``."""
current_marks: set[str] | None = None
"""The markers of the running test (tests/conftest.py sets it; ``None`` between tests)."""


def shared(path: Path) -> Path:
    """``path`` for a test that needs it; a path under ``SHARED`` only for a marked test.

    A marked test skips at collection when ``../shared`` is absent, before it starts any
    server or thread: a skip raised later (in a fake server's thread) hangs its client and
    can crash the xdist worker. So an unmarked test that reaches ``SHARED`` fails here,
    whether or not ``../shared`` is present.
    """
    if path.is_relative_to(SHARED) and MARK not in (current_marks or set()):
        pytest.fail(
            f"{path.name} is under ../shared: mark the test @needs_shared (tests/helpers.py)"
            " so that it skips before it starts, where ../shared is absent",
            pytrace=False,
        )
    return path


def read_stream(path: Path) -> bytes:
    """The bytes of a recorded stream, ours or (through ``shared``) a third party's."""
    return shared(path).read_bytes()


class Feedable(Protocol):
    def feed(self, data: Any) -> list[Event]: ...

    def close(self) -> list[Event]: ...


def feed_pieces(decoder: Feedable, pieces: Iterable[Any]) -> list[Event]:
    out: list[Event] = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    out.extend(decoder.close())
    return out


def split_at(data: Any, cuts: Iterable[int]) -> list[Any]:
    """``data`` cut at the given offsets (sorted, deduplicated, clipped)."""
    points = sorted({c for c in cuts if 0 < c < len(data)})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def cut_points(max_size: int = 10_000) -> st.SearchStrategy[list[int]]:
    """Hypothesis strategy: a handful of split offsets anywhere in an input."""
    return st.lists(st.integers(min_value=1, max_value=max_size), max_size=30)


def decode_ways(factory: Callable[[], Feedable], data: bytes) -> dict[str, list[Event]]:
    """The same input decoded whole and byte by byte."""
    return {
        "whole": feed_pieces(factory(), [data]),
        "bytewise": feed_pieces(factory(), bytewise(data)),
    }


def check_invariants(events: Sequence[Event], *, message_end: bool = True) -> None:
    """The event invariants (docs/decoding.md): one start, deltas, one end per call; one
    final MessageEnd.

    ``message_end=False`` is for the text-format decoders, which never end the message
    (their caller's outer stream does): there must be no ``MessageEnd`` at all.
    """
    state: dict[str, str] = {}
    for ev in events:
        if isinstance(ev, ToolCallStart):
            assert ev.id not in state, f"second start for {ev.id}"
            assert ev.index == len(state), "index counts this response's calls"
            state[ev.id] = "open"
        elif isinstance(ev, ToolCallDelta):
            assert state.get(ev.id) == "open", f"delta for {ev.id} outside its call"
        elif isinstance(ev, ToolCallEnd):
            assert state.get(ev.id) == "open", f"end for {ev.id} without an open call"
            state[ev.id] = "ended"
    assert all(s == "ended" for s in state.values()), f"calls never ended: {state}"
    ends = [i for i, ev in enumerate(events) if isinstance(ev, MessageEnd)]
    if not message_end:
        assert not ends, "text-format decoders never end the message"
        return
    assert len(ends) == 1, f"expected exactly one message_end, got {len(ends)}"
    trailing = events[ends[0] + 1 :]
    assert all(ev.type == "stream_error" for ev in trailing), "events after message_end"


def as_dicts(events: Iterable[Event]) -> list[dict[str, Any]]:
    return [event_to_dict(ev) for ev in events]


def assert_snapshot(name: str, events: Sequence[Event]) -> None:
    """Compare with ``tests/decode/snapshots/NAME.jsonl``; ``UPDATE_SNAPSHOTS=1`` rewrites it.

    A missing snapshot fails: a snapshot is written on purpose and reviewed by a person.
    """
    path = SNAPSHOTS / f"{name}.jsonl"
    lines = [json.dumps(d, ensure_ascii=False, sort_keys=False) for d in as_dicts(events)]
    text = "\n".join(lines) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}; run with UPDATE_SNAPSHOTS=1 and review it"
    assert path.read_text(encoding="utf-8") == text, f"events differ from snapshot {path.name}"


def tiny_png(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of ``width`` x ``height`` red pixels, built here (zlib + struct)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def path_to(node: Any, text: str, at: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The keys and indices leading to the first string in a JSON value that holds
    ``text`` (what a provider names when it refuses that block), or None."""
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        if isinstance(value, str) and text in value:
            return (*at, key)
        found = path_to(value, text, (*at, key))
        if found is not None:
            return found
    return None

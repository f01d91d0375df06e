"""SSE decoder: WHATWG line rules, any chunking, a final event without a blank line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import RECORDED, bytewise, cut_points, needs_shared, read_stream, split_at
from toolwire.errors import UsageError
from toolwire.sse import SSEDecoder, SSEEvent


def _decode(pieces: list[bytes]) -> tuple[list[SSEEvent], bool]:
    decoder = SSEDecoder()
    events = [ev for piece in pieces for ev in decoder.feed(piece)]
    events += decoder.close()
    return events, decoder.truncated


def test_fields_and_multiline_data() -> None:
    body = (
        b": a comment line\n"
        b"event: message_start\n"
        b"id: 7\n"
        b"retry: 3000\n"
        b"data: first\n"
        b"data:second\n"
        b"data:  two spaces\n"
        b"\n"
    )
    events, truncated = _decode([body])
    assert events == [
        SSEEvent(data="first\nsecond\n two spaces", event="message_start", id="7", retry=3000)
    ]
    assert not truncated


def test_event_name_resets_but_last_id_persists() -> None:
    events, _ = _decode([b"event: a\nid: 1\ndata: x\n\ndata: y\n\n"])
    assert events == [
        SSEEvent(data="x", event="a", id="1"),
        SSEEvent(data="y", event="message", id="1"),
    ]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    body = eol.join([b"event: e", b"data: 1", b"", b"data: 2", b"", b""])
    events, truncated = _decode(bytewise(body))
    assert [ev.data for ev in events] == ["1", "2"]
    assert not truncated


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    # If the CR and LF were taken as two line ends, the blank line would dispatch early
    # and "data: b" would become a second event.
    events, _ = _decode([b"data: a\r", b"\ndata: b\r", b"\n\r\n"])
    assert [ev.data for ev in events] == ["a\nb"]


def test_multibyte_character_split_across_chunks() -> None:
    body = "data: café 日本 😀\n\n".encode()
    for i in range(1, len(body)):
        events, _ = _decode([body[:i], body[i:]])
        assert [ev.data for ev in events] == ["café 日本 😀"]


def test_event_without_data_is_not_dispatched() -> None:
    events, _ = _decode([b"event: ping\n\n: keep-alive\n\ndata: x\n\n"])
    assert [ev.data for ev in events] == ["x"]


def test_field_without_colon_and_unknown_fields() -> None:
    events, _ = _decode([b"data\nfoo: bar\nretry: soon\n\n"])
    assert events == [SSEEvent(data="")]  # "data" alone is an empty data line


def test_final_event_without_blank_line_is_delivered_and_flagged() -> None:
    events, truncated = _decode([b"data: 1\n\ndata: last"])
    assert [ev.data for ev in events] == ["1", "last"]
    assert truncated


@needs_shared
def test_fixture_ends_without_blank_line() -> None:
    body = read_stream(RECORDED / "anthropic_tool_use.sse")
    events, truncated = _decode([body])
    assert events[-1].event == "message_stop"  # a strict parser would drop it
    assert truncated


@needs_shared
@given(cuts=cut_points(8000))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    body = read_stream(RECORDED / "openai_chat_parallel_tool_calls.sse")
    whole, _ = _decode([body])
    crlf = body.replace(b"\n", b"\r\n")
    assert _decode(split_at(body, cuts)) == _decode([body])
    assert _decode(split_at(crlf, cuts))[0] == whole


@given(
    datas=st.lists(
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=30),
        max_size=8,
    ),
    cuts=cut_points(600),
    eol=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_round_trip_of_generated_streams(datas: list[str], cuts: list[int], eol: str) -> None:
    body = "".join(f"data: {d}{eol}{eol}" for d in datas).encode()
    events, truncated = _decode(split_at(body, cuts))
    assert [ev.data for ev in events] == datas
    assert not truncated


def test_feed_after_close_is_misuse() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(UsageError):
        decoder.feed(b"data: x\n\n")


# -- event boundaries ------------------------------------------------------------------


def _boundaries(pieces: list[bytes]) -> list[tuple[int, int, list[SSEEvent]]]:
    """(bytes fed, boundary, events so far) after each piece."""
    decoder = SSEDecoder()
    seen: list[SSEEvent] = []
    out = []
    for piece in pieces:
        seen += decoder.feed(piece)
        out.append((decoder.fed, decoder.boundary, list(seen)))
    return out


def test_boundary_is_the_end_of_the_last_complete_event() -> None:
    body = b"event: a\ndata: 1\n\n: comment\n\ndata: 2\ndata: 3\n\ndata: 4"
    ends = [len(b"event: a\ndata: 1\n\n"), len(b"event: a\ndata: 1\n\n: comment\n\n")]
    ends.append(len(body) - len(b"data: 4"))
    decoder = SSEDecoder()
    assert decoder.boundary == 0
    decoder.feed(body)
    assert (decoder.fed, decoder.boundary) == (len(body), ends[-1])
    # byte by byte, it moves exactly at each blank line's end, never past a partial event
    steps = _boundaries(bytewise(body))
    assert sorted({b for _, b, _ in steps} - {0}) == ends
    assert all(b == max([0, *(e for e in ends if e <= fed)]) for fed, b, _ in steps)


def test_boundary_counts_bytes_not_characters() -> None:
    body = "data: café 日本\n\n".encode()
    decoder = SSEDecoder()
    decoder.feed(body[:9])  # inside "é"
    decoder.feed(body[9:])
    assert decoder.boundary == len(body)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_boundary_with_every_line_ending(eol: bytes) -> None:
    body = eol.join([b"data: 1", b"", b"data: 2", b"", b"data: 3"])
    for pieces in ([body], bytewise(body)):
        decoder = SSEDecoder()
        for piece in pieces:
            decoder.feed(piece)
        assert decoder.boundary == len(body) - len(b"data: 3")


def test_boundary_includes_the_lf_of_a_split_crlf() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: 1\r\n\r")  # the blank line has ended, at its CR
    assert decoder.boundary == 10
    decoder.feed(b"\ndata: 2")  # ... and its LF joins it
    assert decoder.boundary == 11
    decoder.feed(b"\r\n\r\n")
    assert decoder.boundary == 22


def test_mixed_line_ends_and_a_crlf_alone_is_not_a_blank_line() -> None:
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: 1\r\ndata: 2\r\n")] == []
    assert decoder.boundary == 0
    assert [e.data for e in decoder.feed(b"\ndata: 3\r\r\n")] == ["1\n2", "3"]
    assert decoder.boundary == len(b"data: 1\r\ndata: 2\r\n\ndata: 3\r\r\n")


@needs_shared
@given(cuts=cut_points(8000), crlf=st.booleans())
def test_boundary_cuts_whole_events_at_any_chunking(cuts: list[int], crlf: bool) -> None:
    body = read_stream(RECORDED / "openai_chat_parallel_tool_calls.sse")
    if crlf:
        body = body.replace(b"\n", b"\r\n")
    for fed, boundary, events in _boundaries(split_at(body, cuts)):
        assert boundary <= fed
        # The bytes before the boundary are exactly the events decoded so far, whole: a
        # fresh decoder finds the same events there, and nothing cut off.
        assert _decode([body[:boundary]]) == (events, False)

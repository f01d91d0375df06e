"""The lean transport's response reader against h11, on the same bytes split everywhere.

h11 is what httpx2 reads HTTP/1.1 with, so a response must come out of both transports
the same: status, headers, body and trailers, or an error from both. Each stream is fed
whole, one byte at a time, and in two pieces split at every offset (h11's own
``t_body_reader`` pattern), then the connection ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import h11
import pytest

from toolwire.backends._h1 import HEAD_LIMIT, ProtocolError, ResponseReader

Fields = tuple[tuple[bytes, bytes], ...]


@dataclass(frozen=True)
class Outcome:
    """What a reader made of a stream; ``error`` when it refused it."""

    status: int = 0
    headers: Fields = ()
    body: bytes = b""
    trailers: Fields = ()
    error: bool = False


def _lower(fields: list[tuple[bytes, bytes]]) -> Fields:
    return tuple((bytes(k).lower(), bytes(v)) for k, v in fields)


def lean(pieces: list[bytes]) -> Outcome:
    reader = ResponseReader()
    body = b""
    try:
        for piece in pieces:
            reader.feed(piece)
            body += reader.take()
        reader.eof()
        body += reader.take()
    except ProtocolError:
        return Outcome(error=True)
    assert reader.head is not None
    head = reader.head
    return Outcome(head.status, _lower(head.headers), body, _lower(reader.trailers))


class _H11:
    """What h11 has read so far."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: Fields = ()
        self.body = b""
        self.trailers: Fields | None = None  # set at the end of the message


def oracle(pieces: list[bytes]) -> Outcome:
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("host", "x")]))
    conn.send(h11.EndOfMessage())
    seen = _H11()
    try:
        for piece in [*pieces, b""]:  # b"": the connection ended
            conn.receive_data(piece)
            while _step(conn, seen):
                pass
    except h11.RemoteProtocolError:
        return Outcome(error=True)
    if seen.trailers is None:
        return Outcome(error=True)  # never reached the end of the message
    return Outcome(seen.status, seen.headers, seen.body, seen.trailers)


def _step(conn: h11.Connection, seen: _H11) -> bool:
    event = conn.next_event()
    if isinstance(event, h11.Response):
        seen.status, seen.headers = event.status_code, _lower(list(event.headers))
    elif isinstance(event, h11.Data):
        seen.body += bytes(event.data)
    elif isinstance(event, h11.EndOfMessage):
        seen.trailers = _lower(list(event.headers))
        return False
    return not (event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed))


SSE = b"data: {}\n\n"
STREAMS: dict[str, bytes] = {
    "content-length": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello",
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"%x\r\n%s\r\n" % (len(SSE), SSE) * 3
    + b"0\r\n\r\n",
    "chunk extensions and trailers": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'3;name=value\r\nabc\r\n2;a;b="q"\r\nde\r\n0;last\r\nX-Checksum: 99\r\nX-Done: yes\r\n\r\n',
    "content-length and chunked: chunked wins": b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
    "chunked and content-length: chunked wins": b"HTTP/1.1 200 OK\r\n"
    b"Transfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n2\r\nab\r\n0\r\n\r\n",
    "body ends with the connection": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    b"all of it",
    "HTTP/1.0, body ends with the connection": b"HTTP/1.0 200 OK\r\n\r\nold",
    "interim 100 then the response": b"HTTP/1.1 100 Continue\r\n\r\n"
    b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
    "204 has no body": b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
    "empty reason, spaces around a value": b"HTTP/1.1 429 \r\nRetry-After:  3 \t\r\n"
    b"Content-Length: 0\r\n\r\n",
    "bare LF line ends": b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
    "error status with a JSON body": b"HTTP/1.1 529 Overloaded\r\nContent-Length: 13\r\n\r\n"
    b'{"e":"busy!"}',
    # refused by both
    "cut inside the head": b"HTTP/1.1 200 OK\r\nContent-Len",
    "cut inside a sized body": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    "cut inside a chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    "cut before the last chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n",
    "cut inside the trailers": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"0\r\nX-T: 1\r\n",
    "malformed chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n",
    "malformed status line": b"HTTP/1.1 OK\r\nContent-Length: 0\r\n\r\n",
    "not HTTP": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "space in a header name": b"HTTP/1.1 200 OK\r\nX A: 1\r\nContent-Length: 0\r\n\r\n",
    "conflicting content-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
    b"Content-Length: 2\r\n\r\nab",
    "bad content-length": b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\na",
    "a transfer coding other than chunked": b"HTTP/1.1 200 OK\r\n"
    b"Transfer-Encoding: gzip\r\n\r\nabc",
    "nothing at all": b"",
}


def _splits(data: bytes) -> list[list[bytes]]:
    ways = [[data], [data[i : i + 1] for i in range(len(data))]]
    return ways + [[data[:i], data[i:]] for i in range(1, len(data))]


@pytest.mark.parametrize("name", list(STREAMS))
def test_the_lean_reader_reads_what_h11_reads(name: str) -> None:
    data = STREAMS[name]
    expected = oracle([data])
    for pieces in _splits(data):
        assert lean(pieces) == expected, f"split {[len(p) for p in pieces][:3]}..."
        assert oracle(pieces) == expected


def test_the_cases_cover_both_outcomes() -> None:
    outcomes = [oracle([data]) for data in STREAMS.values()]
    assert sum(o.error for o in outcomes) >= 10
    assert any(o.trailers for o in outcomes)


def test_an_obs_fold_is_refused_where_h11_unfolds_it() -> None:
    """llhttp accepts a folded header line only with lenient_headers, which also lets
    control characters into values; a model server has no reason to fold."""
    data = b"HTTP/1.1 200 OK\r\nX-A: one\r\n  two\r\nContent-Length: 1\r\n\r\nz"
    assert oracle([data]).headers[0] == (b"x-a", b"one two")
    for pieces in _splits(data):
        assert lean(pieces).error


def test_bytes_after_the_end_make_the_connection_unreusable() -> None:
    one = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    for pieces in [*_splits(one + one), *_splits(one + b"\x00garbage")]:
        reader = ResponseReader()
        for piece in pieces:
            reader.feed(piece)
        assert reader.done
        assert reader.take() == b"ok"
        assert not reader.reusable
    reader = ResponseReader()
    reader.feed(one)
    assert reader.reusable


def test_keep_alive_follows_the_version_and_connection_header() -> None:
    cases = {
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n": True,
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n": False,
        b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n": False,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n\r\n": True,
    }
    for data, reusable in cases.items():
        reader = ResponseReader()
        reader.feed(data)
        assert reader.done
        assert reader.reusable is reusable, data


def test_an_endless_head_is_refused() -> None:
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\n")
    filler = b"X-Filler: " + b"a" * 990 + b"\r\n"
    for _ in range(HEAD_LIMIT // len(filler)):
        reader.feed(filler)
    with pytest.raises(ProtocolError, match="too long"):
        reader.feed(filler)

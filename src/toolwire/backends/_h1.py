"""One HTTP/1.1 response read from bytes (sans-IO), on ``httptools`` (llhttp, in C).

``ResponseReader.feed(data)`` takes bytes as they arrive, split anywhere; ``eof()`` says
the connection ended. The head is ``head`` once it is complete (1xx interim responses
skipped), the body so far comes out of ``take()``, and ``done`` turns true at the end of
the message. Anything malformed raises ``ProtocolError``.

Framing follows h11 (what httpx2 reads HTTP/1.1 with, so both transports agree; the
conformance test replays the same bytes through both): Content-Length, chunked (chunk
extensions ignored, trailers kept in ``trailers``), or the body ends with the connection;
``Transfer-Encoding: chunked`` wins over a ``Content-Length`` sent with it (RFC 9112
section 6.3), any other transfer coding is refused, a bare LF ends a line like CRLF, and
field values lose their surrounding whitespace. Unlike h11, an obs-fold (a header line
continued on the next) is refused: llhttp accepts it only in a mode that also lets
control characters into values.
"""

from __future__ import annotations

from dataclasses import dataclass

import httptools

HEAD_LIMIT = 65536  # bytes of a status line and headers (1xx ones included)

Fields = list[tuple[bytes, bytes]]


class ProtocolError(Exception):
    """The bytes are not a well-formed HTTP/1.1 response (or it ended too soon)."""


class _PastEndError(Exception):
    """A second response began after the first one's end: not a connection to reuse."""


@dataclass(frozen=True, slots=True)
class Head:
    """A final response's status line and headers."""

    status: int
    headers: Fields
    version: bytes  # b"1.1" or b"1.0"


class ResponseReader:
    """The response to one request (module doc); give it one connection's bytes."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        # As h11 reads (module doc): chunked over Content-Length, LF as a line end.
        self._parser.set_dangerous_leniencies(
            lenient_chunked_length=True, lenient_optional_cr_before_lf=True
        )
        self.head: Head | None = None
        self.trailers: Fields = []
        self.done = False
        self.extra = False  # bytes came after the end of the message
        self._fields: Fields = []
        self._body: list[bytes] = []
        self._head_bytes = 0
        self._until_close = False
        self._keep_alive = False

    # -- the caller's side ----------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """The next bytes of the connection, as they came."""
        if self.done:
            self.extra = self.extra or bool(data)
            return
        if self.head is None:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as e:
            if self.done:  # what came after the end: only the connection is spoiled
                self.extra = True
                return
            cause = e.__context__ if isinstance(e, httptools.HttpParserCallbackError) else None
            raise ProtocolError(_reason(cause or e)) from e
        if self.head is None and self._head_bytes > HEAD_LIMIT:
            raise ProtocolError("the response headers are too long")

    def eof(self) -> None:
        """The connection ended: the end of a body framed by it, else an error."""
        if self.done:
            return
        if self.head is None:
            raise ProtocolError("Server disconnected without sending a response.")
        if not self._until_close:
            raise ProtocolError("peer closed connection without sending complete message body")
        self.done = True

    def take(self) -> bytes:
        """The body bytes that came since the last call."""
        body, self._body = self._body, []
        return body[0] if len(body) == 1 else b"".join(body)

    @property
    def reusable(self) -> bool:
        """Whether the connection may carry the next request (the whole message was read,
        nothing came after it, and both sides keep the connection alive)."""
        return self.done and not self.extra and self._keep_alive

    # -- httptools callbacks ----------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.done:
            raise _PastEndError

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields.append((name, value.strip(b" \t")))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        fields, self._fields = self._fields, []
        if 100 <= status < 200:
            return  # interim: its message completes now, with no body
        coding = b",".join(v for k, v in fields if k.lower() == b"transfer-encoding")
        if coding and coding.strip().lower() != b"chunked":
            raise ProtocolError("Only Transfer-Encoding: chunked is supported")
        length = any(k.lower() == b"content-length" for k, _ in fields)
        self._until_close = not coding and not length
        version = self._parser.get_http_version().encode()
        self.head = Head(status, fields, version)

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self.head is None:
            return  # the end of an interim response
        self.trailers, self._fields = self._fields, []
        self._keep_alive = self._parser.should_keep_alive()  # only valid in this callback
        self.done = True


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


__all__ = ["HEAD_LIMIT", "Fields", "Head", "ProtocolError", "ResponseReader"]

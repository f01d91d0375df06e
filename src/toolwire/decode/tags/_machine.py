"""The frame every text-format decoder shares: a buffer with a cursor, one call at a time.

Theory of operation
-------------------
A decoder is fed text and returns events. It keeps the unconsumed text in ``_buf`` with a
read cursor ``_pos``; each feed appends to what is left (at most a held-back tag prefix or
a small undecided piece) and runs the handler of the current state until one reports that
it needs more text. Handlers consume from the cursor and never look behind it, so the work
is linear in the input whatever the chunking.

Every format has the same three phases, whatever its markup:

``text``
    Outside any block. Text goes out as ``TextDelta`` except a suffix that could begin
    the format's opening tag (``_holdback``).
head (``_head`` non-empty)
    After the opening tag, before the tool's name is complete. The markup is kept in
    ``_head``: until the name is known it is not yet a call. If the markup stops
    looking like a call header, it *reverts*: ``_head`` goes out as text (text is never
    lost) and scanning resumes at the offending character. When the header had clearly
    begun (``_committed``), a ``StreamError`` says so first.
call (``_call`` set)
    The name is complete: ``ToolCallStart`` went out on the chunk that completed it.
    Argument markup goes out as ``ToolCallDelta`` (markup formats pass the ``fields``
    that completed and their ``values``); the call ends exactly once, normally
    or with an error (``_malformed`` notes the error and the format skips to its
    closing tag, so the rest of a broken call never leaks as text).

``close()`` flushes: held-back text goes out as text, a head reverts, an open call ends
with an error carrying its raw text (formats whose arguments are already complete end
normally). ``ToolCalls`` owns the start/delta/end invariants; these decoders never emit
``MessageEnd`` (the caller's outer stream does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from toolwire.decode._calls import ToolCalls
from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._wrapper import Wrapper
from toolwire.errors import UsageError
from toolwire.events import Event, StreamError, TextDelta

TEXT = "text"
SKIP = "skip"


class TagDecoder(ABC):
    """``feed(text) -> events`` / ``close() -> events`` for tool calls embedded in text."""

    _OPEN: ClassVar[TagSet]
    """The tag that opens a block (an instance may widen it: ``_opener``)."""
    _AFTER_OPEN: ClassVar[str]
    """The state right after the opening tag."""
    _COMMIT_ON_OPEN: ClassVar[bool] = False
    """Whether the opening tag alone marks tool-call markup (a special token)."""

    def __init__(self) -> None:
        self._buf = ""
        self._pos = 0
        self._out: list[Event] = []
        self._calls = ToolCalls()
        self._call: str | None = None
        self._head: list[str] = []
        self._committed = False
        self._error: str | None = None
        self._state = TEXT
        self._closed = False
        self._opener = self._OPEN
        self._shown_line = True  # the text shown so far is empty or ends with a newline
        self._handlers: dict[str, Callable[[], bool]] = {TEXT: self._on_text, **self._table()}

    @abstractmethod
    def _table(self) -> dict[str, Callable[[], bool]]:
        """State -> handler. A handler consumes text and returns False when it needs more."""

    # -- public surface -------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        """Decode the next piece of the model's text."""
        if self._closed:
            raise UsageError("decoder.feed() called after close()")
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        while self._handlers[self._state]():
            pass
        return self._take()

    def close(self) -> list[Event]:
        """End of the text: flush what was held back and end any open call."""
        if self._closed:
            return []
        self._closed = True
        rest = self._buf[self._pos :]
        self._buf, self._pos = "", 0
        if self._call is not None:
            self._close_call(rest)
        elif self._head:
            self._head.append(rest)
            self._revert("the text ended inside tool-call markup")
        else:
            self._close_text(rest)
        return self._take()

    # -- hooks for the end of the stream -----------------------------------------------

    def _close_call(self, rest: str) -> None:
        """The stream ended inside a call: the call fails with everything it received."""
        self._delta(rest)
        self._fail(self._error or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        self._emit_text(rest)

    # -- the text phase ----------------------------------------------------------------

    def _on_text(self) -> bool:
        start, tag = self._opener.scan(self._buf, self._pos)
        self._text_to(start)
        if tag is None:
            return False
        self._pos += len(tag)
        self._head = [tag]
        self._committed = self._COMMIT_ON_OPEN
        self._state = self._AFTER_OPEN
        self._opened(tag)
        return True

    def _opened(self, tag: str) -> None:  # noqa: B027 - a hook: most formats need nothing here
        """A block's opening ``tag`` was consumed: reset per-block state (or revert)."""

    def _emit_text(self, text: str) -> None:
        if text:
            self._out.append(TextDelta(text))
            self._shown_line = text.endswith("\n")

    def _text_to(self, end: int) -> None:
        self._emit_text(self._buf[self._pos : end])
        self._pos = end

    # -- the head phase ----------------------------------------------------------------

    def _head_to(self, end: int) -> None:
        if end > self._pos:
            self._head.append(self._buf[self._pos : end])
            self._pos = end

    def _revert(self, why: str) -> None:
        """Not a call after all: its markup so far is text; resume scanning at the cursor."""
        raw = "".join(self._head)
        if self._committed:
            self._out.append(StreamError(f"malformed tool-call markup: {why}", raw))
        self._emit_text(raw)
        self._head = []
        self._committed = False
        self._state = TEXT

    # -- the call phase ----------------------------------------------------------------

    def _begin(self, name: str, *, json_args: bool) -> None:
        # Ids are minted from the call's index so that a replay gives the same ids.
        call_id = f"call_{self._calls.started}"
        self._out.append(self._calls.start(call_id, call_id, name, json_args=json_args))
        self._call = call_id
        self._head = []
        self._committed = False
        self._error = None

    def _delta(self, text: str, fields: tuple[str, ...] = (), values: tuple[Any, ...] = ()) -> None:
        assert self._call is not None
        event = self._calls.delta(self._call, text, fields, values)
        if event is not None:
            self._out.append(event)

    def _delta_to(self, end: int) -> None:
        self._delta(self._buf[self._pos : end])
        self._pos = end

    def _end(self, arguments: Any = None) -> None:
        assert self._call is not None
        self._out.append(self._calls.end(self._call, arguments))
        self._call = None

    def _fail(self, error: str) -> None:
        assert self._call is not None
        self._out.append(self._calls.fail(self._call, error))
        self._call = None
        self._error = None

    def _stream_call(self, wrapper: Wrapper, *, bare: bool) -> None:
        """A JSON call object scanned by ``wrapper`` so far: the call begun once its name
        is known (``bare``, no special token before it: once its arguments began,
        ``Wrapper.call_known``), then what its arguments added streamed."""
        known = wrapper.call_known if bare else wrapper.name is not None
        if self._call is None and known:
            self._begin(wrapper.name or "", json_args=True)
        if self._call is not None:
            for piece in wrapper.args:
                self._delta(piece)
            wrapper.args.clear()

    def _json_arguments(self, wrapper: Wrapper, then: str) -> bool:
        """Stream a call's JSON arguments through ``wrapper``; once the object is whole,
        go to state ``then`` (a format's end-of-call token); broken: skip (``_malformed``)."""
        self._pos = wrapper.run(self._buf, self._pos)
        for piece in wrapper.args:
            self._delta(piece)
        wrapper.args.clear()
        if wrapper.error is not None:
            self._malformed(wrapper.error)
        elif wrapper.between_members:
            self._state = then
        else:
            return False
        return True

    def _malformed(self, why: str) -> None:
        """The open call's markup is broken: skip to its closing tag, then fail it."""
        self._error = f"malformed tool-call markup: {why}"
        self._state = SKIP

    def _take(self) -> list[Event]:
        out, self._out = self._out, []
        return out


__all__ = ["SKIP", "TEXT", "TagDecoder"]

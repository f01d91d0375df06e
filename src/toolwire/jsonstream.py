"""Incremental JSON for streamed tool arguments: only the new text of each delta is read.

Theory of operation. ``JsonStream`` is a resumable push parser. Each ``feed(text)``
advances a small state machine over ``text`` alone, so the total work for a call is
linear in its argument size (peers re-parse the whole buffer per delta: quadratic).
String bodies, which are nearly all of a code-carrying argument, are skipped in C with
one search for a quote per delta; only structure is walked character by character.

The partial value obeys these rules (docs/design.md, "Incremental JSON", after jsonriver):

* a value's type never changes once visible;
* numbers, ``true``, ``false`` and ``null`` appear only when complete;
* strings only grow by appending; arrays and objects only grow at the end;
* an object key appears only when it is complete and its value's type is known.

``feed`` returns the top-level keys whose values that text completed, in order, so a
caller can title a tool call from ``file_path`` long before ``content`` has ended.

The final value is ``json.loads`` of the whole text, always: the incremental state is a
view for the impatient, never a second opinion. ``""`` (or only whitespace) means ``{}``.
Invalid or truncated JSON gives a ``ParseResult`` with ``error`` and the raw text; no
exception escapes ``feed`` or ``finish`` for bad input.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from toolwire.errors import UsageError

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_LITERALS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}
# An escape cut short at the end of a partial string body: a lone backslash, ``\\u``
# with fewer than four hex digits, or a high surrogate still waiting for its low half.
_CUT_ESCAPE = re.compile(
    r"(?<!\\)(?:\\\\)*(\\(?:u[0-9a-fA-F]{0,3}|u[dD][89abAB][0-9a-fA-F]{2})?)\Z"
)


class _Mode(IntEnum):
    """What the parser expects next."""

    VALUE = 0  # a value (``]`` too when the array is still empty)
    KEY = 1  # a key (``}`` too when the object is still empty)
    COLON = 2
    AFTER = 3  # a value just ended: ``,`` or a closing bracket
    DONE = 4  # the root value ended: only whitespace may follow
    STRING = 5  # inside a string body, a key's or a value's
    NUMBER = 6
    LITERAL = 7


# The members under module names, read per delta and per structural character: on
# Python 3.11 ``_Mode.X`` is a Python-level descriptor call, and reading it once per
# delta costs 6% on bench/decode_args.py, row (a) 4 MB.
_VALUE, _KEY, _COLON, _AFTER, _DONE, _STRING, _NUMBER, _LITERAL = _Mode


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Final outcome: ``value`` when ``error`` is None, else ``error`` with ``raw`` text."""

    value: Any
    error: str | None
    raw: str


class _Frame:
    __slots__ = ("container", "empty", "key")

    def __init__(self, container: dict[str, Any] | list[Any]) -> None:
        self.container = container
        self.key = ""
        self.empty = True


class JsonStream:
    """Feed JSON text in pieces; know the partial value and which fields completed."""

    # Read per delta: slots save 4% on bench/decode_args.py, row (a) 4 MB.
    __slots__ = (
        "_done",
        "_error",
        "_esc",
        "_finished",
        "_is_key",
        "_mode",
        "_parts",
        "_result",
        "_root",
        "_slot",
        "_stack",
        "_str",
        "_tok",
    )

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._mode = _VALUE
        self._stack: list[_Frame] = []
        self._root: Any = None
        self._str: list[str] = []  # raw (still escaped) pieces of the open string
        self._is_key = False
        self._esc = False  # the last piece ended in a lone backslash
        self._slot: _Frame | None = None  # where the open string value lives (None: root)
        self._tok: list[str] = []  # characters of an open number or literal
        self._error: str | None = None
        self._done: list[str] = []
        self._finished = False
        self._result: ParseResult | None = None

    # -- public surface -------------------------------------------------------------

    def feed(self, text: str) -> tuple[str, ...]:
        """Consume ``text``; return the top-level keys whose values it completed, in order."""
        if self._finished:
            raise UsageError("JsonStream.feed() called after finish()")
        self._parts.append(text)
        if self._error is None:
            i = 0
            if self._mode is _STRING and text:
                # A delta inside a string body (most of a file's content) needs only the
                # scanner: skipping the loop saves 3% on bench/decode_args.py, row (a) 4 MB.
                i = self._string(text, 0)
            if i < len(text):
                self._run(text, i)
        if not self._done:
            return ()
        done = tuple(self._done)
        self._done.clear()
        return done

    @property
    def text(self) -> str:
        """All text fed so far."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def error(self) -> str | None:
        """The first syntax error seen so far, if any (the final word is ``finish``)."""
        return self._error

    def partial(self) -> Any:
        """The partial value (``None`` until the root's type is known).

        A method, not a property, because it does work: an open string is decoded only
        when asked (its escapes up to the cut). The returned object is live: later feeds
        extend it in place. Copy it to keep it.
        """
        if self._mode is _STRING and not self._is_key:
            self._show_partial_string()
        return self._root

    def finish(self) -> ParseResult:
        """End of input: the final value (``""`` means ``{}``) or an error with the raw text."""
        if self._result is None:
            self._finished = True
            raw = self.text
            self._result = parse_arguments(raw)
        return self._result

    # -- the state machine ----------------------------------------------------------

    def _run(self, text: str, i: int) -> None:
        n = len(text)
        while i < n and self._error is None:
            mode = self._mode
            if mode is _STRING:
                i = self._string(text, i)
            elif mode is _NUMBER:
                i = self._number(text, i)
            elif mode is _LITERAL:
                i = self._literal(text, i)
            else:
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if i < n:
                    self._structural(mode, text[i], i)
                    i += 1

    def _string(self, text: str, i: int) -> int:
        """Scan a string body from ``i``, closing the string at its quote; the next index.

        The one scan of string bodies, keys and values alike. Most of a long argument
        (file content) is one string body: a delta inside it costs one ``str.find``.
        """
        if self._esc:  # the character after a backslash that ended the previous delta
            self._esc = False
            self._str.append(text[i])
            i += 1
        end = text.find('"', i)
        if end >= 0:
            end = _closing_quote(text, i, end)
        if end < 0:
            self._str.append(text[i:])
            # A backslash ending the delta escapes the first character of the next one.
            self._esc = text[-1:] == "\\" and _escaped(text, i, len(text))
            return len(text)
        self._str.append(text[i:end])
        self._close_string(end)
        return end + 1

    def _close_string(self, at: int) -> None:
        raw = "".join(self._str)
        self._str = []
        try:
            value = json.loads('"' + raw + '"')
        except ValueError as e:
            self._fail(f"bad string ending at offset {self._at(at)}: {e}")
            return
        if self._is_key:
            frame = self._stack[-1]
            frame.key = value
            self._mode = _COLON
            return
        self._set_string(value)
        self._value_done()

    def _number(self, text: str, i: int) -> int:
        j, n = i, len(text)
        while j < n and text[j] in _NUMBER_CHARS:
            j += 1
        self._tok.append(text[i:j])
        if j < n:  # a delimiter: the number is complete
            self._end_number(j)
        return j

    def _end_number(self, at: int) -> None:
        tok = "".join(self._tok)
        self._tok = []
        if _NUMBER_TEXT.fullmatch(tok) is None:
            self._fail(f"bad number {tok!r} before offset {self._at(at)}")
            return
        self._place(json.loads(tok))
        self._value_done()

    def _literal(self, text: str, i: int) -> int:
        word, value = _LITERALS[self._tok[0][0]]
        have = "".join(self._tok)
        take = text[i : i + len(word) - len(have)]
        have += take
        if not word.startswith(have):
            self._fail(f"bad literal {have!r} at offset {self._at(i)}")
            return len(text)
        self._tok = [have]
        if have == word:
            self._tok = []
            self._place(value)
            self._value_done()
        return i + len(take)

    def _structural(self, mode: _Mode, c: str, i: int) -> None:
        if mode is _VALUE:
            self._begin_value(c, i)
        elif mode is _AFTER:
            self._after_value(c, i)
        elif mode is _KEY:
            if c == '"':
                self._stack[-1].empty = False
                self._is_key = True
                self._mode = _STRING
            elif c == "}" and self._stack[-1].empty:
                self._close_container()
            else:
                self._fail(f"expected a key at offset {self._at(i)}, got {c!r}")
        elif mode is _COLON:
            if c == ":":
                self._mode = _VALUE
            else:
                self._fail(f"expected ':' at offset {self._at(i)}, got {c!r}")
        else:  # _DONE
            self._fail(f"extra data after the value at offset {self._at(i)}")

    def _begin_value(self, c: str, i: int) -> None:
        if self._stack:
            frame = self._stack[-1]
            if isinstance(frame.container, list):
                if c == "]" and frame.empty:
                    self._close_container()
                    return
                frame.empty = False
        if c == '"':
            self._is_key = False
            self._mode = _STRING
            self._slot = self._stack[-1] if self._stack else None
            self._place("")
        elif c == "{" or c == "[":
            container: dict[str, Any] | list[Any] = {} if c == "{" else []
            self._place(container)
            self._stack.append(_Frame(container))
            self._mode = _KEY if c == "{" else _VALUE
        elif c in _LITERALS:
            self._tok = [c]
            self._mode = _LITERAL
        elif c == "-" or c.isdigit():
            self._tok = [c]
            self._mode = _NUMBER
        else:
            self._fail(f"expected a value at offset {self._at(i)}, got {c!r}")

    def _after_value(self, c: str, i: int) -> None:
        frame = self._stack[-1]
        is_obj = isinstance(frame.container, dict)
        if c == ",":
            self._mode = _KEY if is_obj else _VALUE
        elif c == ("}" if is_obj else "]"):
            self._close_container()
        else:
            self._fail(f"expected ',' or a closing bracket at offset {self._at(i)}")

    def _close_container(self) -> None:
        self._stack.pop()
        self._value_done()

    # -- placing values in the partial tree -------------------------------------------

    def _place(self, value: Any) -> None:
        if not self._stack:
            self._root = value
            return
        frame = self._stack[-1]
        if isinstance(frame.container, dict):
            frame.container[frame.key] = value
        else:
            frame.container.append(value)

    def _set_string(self, value: str) -> None:
        slot = self._slot
        if slot is None:
            self._root = value
        elif isinstance(slot.container, dict):
            slot.container[slot.key] = value
        else:
            slot.container[-1] = value

    def _value_done(self) -> None:
        stack = self._stack
        if not stack:
            self._mode = _DONE
            return
        if len(stack) == 1 and isinstance(stack[0].container, dict):
            self._done.append(stack[0].key)
        self._mode = _AFTER

    def _show_partial_string(self) -> None:
        raw = "".join(self._str)
        self._str = [raw]
        # Twice: cutting ``\ude`` can leave a high surrogate waiting for its low half.
        for _ in range(2):
            cut = _CUT_ESCAPE.search(raw)
            if cut is not None and cut.group(1):
                raw = raw[: cut.start(1)]
        # On a bad escape keep the last good prefix: the error surfaces when the string closes.
        with contextlib.suppress(ValueError):
            self._set_string(json.loads('"' + raw + '"'))

    def _at(self, i: int) -> int:
        """Offset in the whole text of position ``i`` of the current delta (errors only)."""
        return sum(map(len, self._parts[:-1])) + i

    def _fail(self, message: str) -> None:
        self._error = message


def _closing_quote(text: str, start: int, q: int) -> int:
    """The first quote at or after ``q`` that no backslash escapes, or -1.

    ``text[start]`` must not be escaped by what precedes it (the caller tracks that).
    """
    while q >= 0 and _escaped(text, start, q):
        q = text.find('"', q + 1)
    return q


def _escaped(text: str, start: int, at: int) -> bool:
    """True when an odd run of backslashes, none before ``start``, ends just before ``at``."""
    k = at
    while k > start and text[k - 1] == "\\":
        k -= 1
    return bool((at - k) & 1)


def parse_arguments(raw: str) -> ParseResult:
    """Parse complete argument text at once: ``json.loads``, with ``""`` meaning ``{}``."""
    if not raw.strip():
        return ParseResult({}, None, raw)
    try:
        return ParseResult(json.loads(raw), None, raw)
    except ValueError as e:
        return ParseResult(None, f"invalid JSON arguments: {e}", raw)
    except RecursionError:
        # json.loads recurses per nesting level: ~1,000 levels exhaust the stack.
        return ParseResult(None, "invalid JSON arguments: nested too deeply", raw)


__all__ = ["JsonStream", "ParseResult", "parse_arguments"]

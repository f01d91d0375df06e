"""Scan the JSON object of a Hermes call, ``{"name": ..., "arguments": ...}``, as it streams.

The wrapper is not parsed into a value: the decoder needs two things from it, early:

* the ``name``, the moment its string closes (never a partial name);
* the text of the ``arguments`` value (alias ``parameters``) as the model wrote it, to
  stream to ``JsonStream``. When ``arguments`` is a JSON *string* holding JSON (some
  models do that), its decoded content is what streams, so the arguments parse as the
  object they stand for. Escapes cut by a chunk are held until complete; a ``\\uD83D``
  waits for its low surrogate, so a pair is never decoded as two halves.

Theory of operation: a table of modes (``_OBJ`` -> ``_KEY`` -> ``_COLON`` -> ``_VALUE``
-> ``_AFTER`` -> ...) walked one structural character at a time; string bodies and the
insides of values are skipped with regexes, so the work per character is constant and
nothing is scanned twice. ``run`` consumes from a cursor and stops at the end of the
object, at the end of the buffer, or *before* the first character that breaks the object
(``error`` set), so the caller can hand that character on.

Values other than ``name`` and ``arguments`` are skipped with string-aware bracket depth;
their inner validity is not checked (they are dropped). The arguments value is checked
by ``JsonStream``, not here. ``Wrapper(value_only=True)`` scans an arguments value alone
(``<function=NAME>{...}</function>``) and stops where it ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from toolwire.decode.tags._holdback import skip_space

_STR_RUN = re.compile(r'[^"\\]*')
# ``<`` is never valid JSON outside a string: stopping there finds ``</tool_call>`` when a
# model drops closing brackets, instead of swallowing the rest of the response.
_NESTED_RUN = re.compile(r'[^"{}\[\]<]+')
_SCALAR_RUN = re.compile(r'[^"{}\[\],:< \t\r\n]+')
_STRING_OK = re.compile(r'(?:[^"\\\x00-\x1f]+|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
_HIGH_SURROGATE = re.compile(r"[dD][89abAB][0-9a-fA-F]{2}")

_OBJ, _KEY0, _KEY, _KEY_STR, _COLON, _VALUE = range(6)
_NAME_STR, _ARG_STR, _SCAN, _AFTER, _DONE = range(6, 11)

_ARG_KEYS = ("arguments", "parameters")


class Wrapper:
    """Incremental scanner of one wrapper object; see the module docstring."""

    def __init__(self, *, value_only: bool = False) -> None:
        self.name: str | None = None
        self.first_key: str | None = None
        self.second_key: str | None = None
        self.args: list[str] = []  # arguments text not yet taken by the decoder
        self.error: str | None = None
        self.done = False
        self._value_only = value_only
        self._mode = _VALUE if value_only else _OBJ
        self._key = _ARG_KEYS[0] if value_only else ""
        self._raw: list[str] = []  # raw body of the open key/name string; escaped tail
        self._esc = False
        self._depth = 0
        self._in_str = False  # inside a string of a scanned value
        self._scalar = False  # inside a number or literal at depth 0
        self._bad = False  # the arguments string broke; the error waits for its end
        self._emit = False
        self._have_args = False
        self._table: dict[int, Callable[[str, int], int]] = {
            _KEY_STR: self._key_str,
            _NAME_STR: self._name_str,
            _ARG_STR: self._arg_str,
            _SCAN: self._scan,
        }

    @property
    def between_members(self) -> bool:
        """A member value just ended: the object is whole but for ``}`` (lenient end)."""
        return self._mode == _AFTER

    def not_a_call(self, tools: frozenset[str] | None) -> str | None:
        """Why an object without a special token before it is no call (of ``tools``; None:
        any name), or None while it may still be one: its name first, then its arguments
        (a tool's definition, ``"description"`` after the name, is no call)."""
        if self.first_key not in (None, "name"):
            return "a JSON object that does not start with a name"
        if self.name is not None and tools is not None and self.name not in tools:
            return "not a declared tool"
        if self.second_key not in (None, "arguments", "parameters"):
            return "a JSON object with members other than a call's"
        return None

    @property
    def call_known(self) -> bool:
        """An object without a special token is a call once its second member began."""
        return self.name is not None and self.second_key is not None

    def run(self, buf: str, i: int) -> int:
        """Consume from ``i``; return where it stopped (see the module docstring)."""
        n = len(buf)
        while i < n and not self.done and self.error is None:
            if self._value_only and self._mode == _AFTER:
                break
            handler = self._table.get(self._mode)
            i = handler(buf, i) if handler is not None else self._structural(buf, i)
        return i

    # -- structure -----------------------------------------------------------------------

    def _structural(self, buf: str, i: int) -> int:
        i = skip_space(buf, i)
        if i == len(buf):
            return i
        c, mode = buf[i], self._mode
        if mode == _OBJ and c == "{":
            self._mode = _KEY0
        elif mode in (_KEY0, _KEY) and c == '"':
            self._raw, self._mode = [], _KEY_STR
        elif (mode == _KEY0 and c == "}") or (mode == _AFTER and c == "}"):
            self._mode, self.done = _DONE, True
        elif mode == _COLON and c == ":":
            self._mode = _VALUE
        elif mode == _AFTER and c == ",":
            self._mode = _KEY
        elif mode == _VALUE:
            return self._begin_value(c, i)
        else:
            self.error = f"unexpected {c!r} in the tool call's JSON"
            return i
        return i + 1

    def _begin_value(self, c: str, i: int) -> int:
        if self._key == "name" and self.name is None:
            if c != '"':
                self.error = "the tool call's name is not a string"
                return i
            self._raw, self._mode = [], _NAME_STR
            return i + 1
        self._emit = self._key in _ARG_KEYS and not self._have_args
        self._have_args = self._have_args or self._emit
        if self._emit and c == '"':
            self._raw, self._mode = [], _ARG_STR
            return i + 1
        self._depth, self._scalar, self._mode = 0, False, _SCAN
        return i

    # -- strings -------------------------------------------------------------------------

    def _body(self, buf: str, i: int) -> tuple[int, bool]:
        """Skip a string body from ``i``: (index, closed). A closing quote is not consumed."""
        n = len(buf)
        while i < n:
            if self._esc:
                self._esc = False
                i += 1
                continue
            i = _STR_RUN.match(buf, i).end()  # type: ignore[union-attr]  # always matches
            if i == n:
                break
            if buf[i] == '"':
                return i, True
            self._esc = True
            i += 1
        return i, False

    def _string(self, buf: str, i: int) -> tuple[int, str | None]:
        """Collect a key or name string; its decoded value once it closes."""
        j, closed = self._body(buf, i)
        self._raw.append(buf[i:j])
        if not closed:
            return j, None
        try:
            value: str = json.loads('"' + "".join(self._raw) + '"')
        except ValueError:
            self.error = "a bad string in the tool call's JSON"
            return j + 1, None
        return j + 1, value

    def _key_str(self, buf: str, i: int) -> int:
        j, key = self._string(buf, i)
        if key is not None:
            self._key, self._mode = key, _COLON
            if self.first_key is None:
                self.first_key = key
            elif self.second_key is None:
                self.second_key = key
        return j

    def _name_str(self, buf: str, i: int) -> int:
        j, name = self._string(buf, i)
        if name is None:
            return j
        if not name.strip():
            self.error = "the tool call's name is empty"
        self.name, self._mode = name.strip() or None, _AFTER
        return j

    def _arg_str(self, buf: str, i: int) -> int:
        j, closed = self._body(buf, i)
        if not self._bad:
            self._decode(buf[i:j], closed=closed)
        if not closed:
            return j
        if self._bad:
            # Reported at the closing quote, a place no chunking moves.
            self.error = "a bad escape or control character in the arguments string"
        self._mode = _AFTER
        return j + 1

    def _decode(self, piece: str, *, closed: bool) -> None:
        raw = "".join(self._raw) + piece
        cut = len(raw) if closed else _safe_cut(raw)
        good = _STRING_OK.match(raw, 0, cut).end()  # type: ignore[union-attr]
        if good < cut:
            self._bad = True
            cut = good
        text: str = json.loads('"' + raw[:cut] + '"')  # cannot fail: checked above
        self._raw = [raw[cut:]]
        if text:
            self.args.append(text)

    # -- other values --------------------------------------------------------------------

    def _scan(self, buf: str, i: int) -> int:
        start, n = i, len(buf)
        while i < n and self._mode == _SCAN and self.error is None:
            if self._in_str:
                j, closed = self._body(buf, i)
                i = j
                if closed:
                    i += 1
                    self._in_str = False
                    if self._depth == 0:
                        self._mode = _AFTER
            elif self._depth:
                i = self._nested(buf, i)
            else:
                i = self._top(buf, i)
        if self._emit and i > start:
            self.args.append(buf[start:i])
        return i

    def _nested(self, buf: str, i: int) -> int:
        m = _NESTED_RUN.match(buf, i)
        if m is not None:
            return m.end()
        c = buf[i]
        if c == "<":
            self.error = "'<' inside the tool call's arguments JSON"
            return i
        if c == '"':
            self._in_str = True
        elif c in "{[":
            self._depth += 1
        else:
            self._depth -= 1
            if self._depth == 0:
                self._mode = _AFTER
        return i + 1

    def _top(self, buf: str, i: int) -> int:
        """At depth 0: the value's first character, or the rest of a number or literal."""
        c = buf[i]
        if not self._scalar and c in '"{[':
            self._in_str = c == '"'
            self._depth = 0 if self._in_str else 1
            return i + 1
        m = _SCALAR_RUN.match(buf, i)
        if m is not None:
            self._scalar = True
            return m.end()
        if self._scalar:  # a delimiter ends a number or literal; it belongs to the object
            self._mode = _AFTER
        else:
            self.error = f"expected a value in the tool call's JSON, got {c!r}"
        return i


def _safe_cut(raw: str) -> int:
    """Length of the prefix of an escaped string body that decodes on its own.

    Stops before an escape cut by the chunk, and before a high surrogate escape while what
    follows could still be the escape of its low half (decoded apart, the two halves
    would stay two broken characters).
    """
    i = raw.find("\\")
    while i >= 0:
        size = 6 if raw.startswith("u", i + 1) else 2
        if i + size > len(raw):
            return i
        if size == 6 and _HIGH_SURROGATE.fullmatch(raw, i + 2, i + 6):
            after = raw[i + 6 : i + 12]
            if len(after) < 6 and "\\u".startswith(after[:2]):
                return i
        i = raw.find("\\", i + size)
    return len(raw)


__all__ = ["Wrapper"]

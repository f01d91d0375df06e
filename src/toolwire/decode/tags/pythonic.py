"""Pythonic tool calls: ``[get_weather(city="Paris"), get_time(tz='UTC')]``.

Llama 3.2's and Llama 4's pythonic templates (and other models vLLM's ``pythonic`` parser
serves) write a Python list of calls, each with keyword arguments whose values are Python
literals; Llama 4 may wrap the list in ``<|python_start|>`` ... ``<|python_end|>``.

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    text -> list -> name -> key -> value -> key ... -> after -> name ... -> text

* ``<|python_start|>`` opens a block whatever the names; a bare ``[`` is a block only with
  the declared tools, at a line start outside a Markdown code fence (``_fence``), and each
  call's name must be a declared tool (a
  Markdown link ``[text](url)`` or a list in prose reverts to text without an error).
* name: an identifier and ``(``; ``ToolCallStart`` goes out on the chunk holding ``(``.
* key / value: ``KEY=`` then a literal, up to a ``,`` or ``)`` outside strings and
  brackets. Strings (``'``, ``"``, triple-quoted) are skipped with regexes, so the work is
  linear. The markup streams as ``ToolCallDelta`` text; when a value ends it is read with
  ``ast.literal_eval`` (literals only: nothing is run) and goes out in ``fields`` and
  ``values``. A value that is no JSON value (``b'x'``, ``1e999``, a name) or an argument
  without a key fails the call at its ``)``; the other calls of the list stand.
* after: ``,`` and the next call, or ``]`` (then ``<|python_end|>``, if the block had
  ``<|python_start|>``). Anything else is text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._fence import FenceTracker
from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import TEXT, TagDecoder
from toolwire.decode.tags._values import read_literal

_START, _END = "<|python_start|>", "<|python_end|>"
_LIST, _NAME, _KEY, _VALUE, _AFTER, _CLOSE = "list", "name", "key", "value", "after", "close"
_NAME_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_.]{0,255})[ \t]*\(")
_NAME_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,255}[ \t]*")
_KEY_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,255})[ \t]*=")
_KEY_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}[ \t]*")
_PLAIN = re.compile(r"[^'\"()\[\]{},]+")  # outside strings: nothing that matters
_BODY = {q: re.compile(rf"[^{q}\\\\]+") for q in "'\""}


class PythonicDecoder(TagDecoder):
    """Decode pythonic ``[name(key=value, ...), ...]`` calls out of a model's text."""

    _OPEN = TagSet(_START)
    _AFTER_OPEN = _LIST
    _COMMIT_ON_OPEN = True

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self._tools = frozenset(schemas or ())
        self._tagged = False  # the block opened with <|python_start|>
        self._params: dict[str, Any] = {}
        self._key = ""
        self._raw: list[str] = []
        self._bad: str | None = None  # why the open call fails at its ``)``
        self._quote = ""  # the open string's quote inside a value
        self._esc = False  # a value's string piece ended in a backslash
        self._depth = 0
        self._ws: list[str] = []
        self._fence = FenceTracker()
        if self._tools:
            self._opener = TagSet(_START, "[")

    def _emit_text(self, text: str) -> None:
        super()._emit_text(text)
        self._fence.feed(text)

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _LIST: self._on_list,
            _NAME: self._on_name,
            _KEY: self._on_key,
            _VALUE: self._on_value,
            _AFTER: self._on_after,
            _CLOSE: self._on_close,
        }

    def _opened(self, tag: str) -> None:
        self._tagged = tag == _START
        if self._tagged:
            return
        self._committed = False  # no special token: reverting it is no error
        if not self._shown_line or self._fence.inside:  # quoted in prose, or an example
            self._revert("not at a line start, or in a code block")
        else:
            self._state = _NAME

    # -- the list and each call's name ---------------------------------------------------

    def _on_list(self) -> bool:
        self._head_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, ("[",))
        if opt == "":
            return False
        if opt is None:
            self._revert("no list of calls after <|python_start|>")
        else:
            self._head_to(self._pos + 1)
            self._state = _NAME
        return True

    def _on_name(self) -> bool:
        self._head_to(skip_space(self._buf, self._pos))
        m = _NAME_RE.match(self._buf, self._pos)
        if m is None:
            part = _NAME_PART.match(self._buf, self._pos)
            if self._pos == len(self._buf) or (part and part.end() == len(self._buf)):
                return False
            self._revert("not a call")
        elif not self._tagged and self._tools and m.group(1) not in self._tools:
            self._revert("not a declared tool")
        else:
            self._head_to(m.end() - 1)
            self._begin(m.group(1), json_args=False)
            self._delta_to(m.end())
            self._params, self._bad, self._state = {}, None, _KEY
        return True

    # -- arguments -----------------------------------------------------------------------

    def _on_key(self) -> bool:
        self._delta_to(skip_space(self._buf, self._pos))
        if self._pos == len(self._buf):
            return False
        if self._buf[self._pos] == ")":
            self._delta_to(self._pos + 1)
            self._finish()
            return True
        m = _KEY_RE.match(self._buf, self._pos)
        if m is None:
            part = _KEY_PART.match(self._buf, self._pos)
            if part is not None and part.end() == len(self._buf):
                return False
            self._bad = self._bad or "an argument without a keyword"
            self._key = ""
        else:
            self._key = m.group(1)
            self._delta_to(m.end())
        self._raw, self._quote, self._esc, self._depth = [], "", False, 0
        self._state = _VALUE
        return True

    def _on_value(self) -> bool:
        start = self._pos
        end, done = self._scan(self._buf, start)
        if end > start:
            self._raw.append(self._buf[start:end])
            self._delta_to(end)
        if not done:
            return False
        self._value_done()
        sep = self._buf[self._pos]
        self._delta_to(self._pos + 1)
        if sep == ")":
            self._finish()
        else:
            self._state = _KEY
        return True

    def _value_done(self) -> None:
        text = "".join(self._raw).strip()
        value = read_literal(text) if text else None
        if not text or (value is None and text not in ("None", "null")):
            self._bad = self._bad or f"{self._key or 'an argument'}: not a literal value"
        elif not _finite(value):
            self._bad = self._bad or f"{self._key}: not a finite number"
        elif self._key and not self._bad:
            self._params[self._key] = value
            self._delta("", (self._key,), (value,))

    def _finish(self) -> None:
        if self._bad is not None:
            self._fail(f"malformed tool call: {self._bad}")
        else:
            self._end(self._params)
        self._ws, self._state = [], _AFTER

    # -- a value's extent ----------------------------------------------------------------

    def _scan(self, buf: str, i: int) -> tuple[int, bool]:
        """Consume a value from ``i``: (where it stopped, whether at its ``,`` or ``)``)."""
        n = len(buf)
        while i < n:
            if self._quote:
                i = self._string(buf, i)
                if self._quote:  # the buffer's end, or a partial closing quote held
                    return i, False
                continue
            m = _PLAIN.match(buf, i)
            if m is not None:
                i = m.end()
                continue
            c = buf[i]
            if c in "'\"":
                if buf.startswith(c * 3, i):
                    self._quote, i = c * 3, i + 3
                elif n - i < 3 and buf[i:] == c * (n - i):
                    return i, False  # ``''`` may be an empty string or begin ``'''``
                else:
                    self._quote, i = c, i + 1
                continue
            if self._depth == 0 and c in ",)":
                return i, True
            self._depth += 1 if c in "([{" else -1 if c in ")]}" else 0
            i += 1
        return i, False

    def _string(self, buf: str, i: int) -> int:
        """Skip a string body from ``i``; the index after its closing quote, or where it
        stopped (the buffer's end, or a partial closing ``'''`` held for more text)."""
        n, q = len(buf), self._quote
        while i < n:
            if self._esc:
                self._esc, i = False, i + 1
                continue
            m = _BODY[q[0]].match(buf, i)
            i = m.end() if m is not None else i
            if i == n:
                break
            if buf[i] == "\\":
                self._esc, i = True, i + 1
            elif buf.startswith(q, i):
                self._quote = ""
                return i + len(q)
            elif len(q) == 3 and n - i < 3 and buf[i:] == q[: n - i]:
                return i
            else:
                i += 1  # a lone quote inside a triple-quoted string
        return i

    # -- between calls -------------------------------------------------------------------

    def _on_after(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._pos = end
        if end == len(self._buf):
            return False
        c = self._buf[end]
        if c == ",":
            self._head, self._ws = ["".join(self._ws), c], []
            self._pos, self._state = end + 1, _NAME
        elif c == "]":
            self._pos, self._ws = end + 1, []
            self._state = _CLOSE if self._tagged else TEXT
        else:
            self._emit_text("".join(self._ws))
            self._ws, self._state = [], TEXT
        return True

    def _on_close(self) -> bool:
        at = skip_space(self._buf, self._pos)
        opt = expect(self._buf, at, (_END,))
        if opt == "" or (opt is None and at == len(self._buf)):
            return False
        self._pos = at + len(opt) if opt else self._pos
        self._state = TEXT
        return True

    def _close_call(self, rest: str) -> None:
        self._delta(rest)
        self._fail(self._bad or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def render(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as Llama's pythonic template writes it (values as Python literals)."""
    return f"[{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})]"


__all__ = ["PythonicDecoder", "render"]

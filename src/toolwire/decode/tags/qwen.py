"""Qwen3-Coder XML tool calls: ``<tool_call><function=NAME><parameter=KEY>value...``.

Full form, as the model's chat template renders it::

    <tool_call>
    <function=Write>
    <parameter=file_path>
    src/app.py
    </parameter>
    <parameter=content>
    print("hi")
    </parameter>
    </function>
    </tool_call>

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    text -> head -> name -> params <-> key -> value -> value_end -> params
                              |  (``</function>``: the call ends)
                              +-> after -> text, or name (another function in the block)

* head: whitespace, then ``<function=``. ``<tool_call>`` is a special token, so a block
  without it reverts to text with a ``StreamError``.
* bare_name, bare_next: a ``<function=NAME>`` without ``<tool_call>`` (vLLM and SGLang accept
  it) is a call only with the tool list: at a line start, NAME a declared tool, and the next
  markup (after whitespace) ``<parameter=`` or ``</function>``; until that markup shows, the
  header is held, uncommitted, and anything else reverts it to text without an error. Llama
  3.1 writes ``<function=name>{json}</function>`` in prose: its ``{`` keeps it text.
* name: up to ``>``, no markup, no newline; ``ToolCallStart`` goes out on the chunk
  holding that ``>``. Everything from then to ``</function>`` (exclusive) goes out as
  ``ToolCallDelta.text``: the markup as written. A JSON body (``{``) is malformed.
* value: raw text. It streams as it arrives (vllm #30439, sglang #27005 buffered it):
  only a suffix that could begin a tag is held back. One leading and one trailing
  newline are dropped (the template adds them); then the tool's JSON schema, when known,
  types it (``_values.convert``).
* A tag inside a value counts only where the structure allows it (a value is often code
  that writes this very format), so a literal tag can neither end the call early nor
  start a parameter that overwrites one already given:

  - value_end: after ``</parameter>``, whitespace and then ``</function>``, or
    ``<parameter=KEY>`` with a KEY this call has not given yet (and, with the tool's
    schema, one it declares), confirm the close and the key goes out in ``fields``.
    Anything else: the ``</parameter>`` was value text.
  - other markup counts only at the start of a line, where the template puts it (a tag
    quoted in code is value text). A literal call the value holds on lines of its own
    (``<tool_call>``, ``<function=NAME>`` ... ``</function>``) is counted: while one is
    open, its tags are value text.
  - a missing ``</parameter>`` is accepted when, at a line start and outside any literal
    call, such a ``<parameter=KEY>`` follows, or a ``</function>`` followed by
    ``</tool_call>``, another ``<function=`` or the end of the text. A drifted close
    marker alone on the value's last line (``</parameter1>``, ``</parameter_function>``,
    ``</parameter``) is then dropped from the value.
* after: whitespace, then ``</tool_call>``, or another ``<function=`` in the same block;
  anything else is text, with the whitespace before it.
* skip: after malformed markup, up to ``</function>`` or ``</tool_call>``; the call fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from toolwire.decode.tags._holdback import SPACE, TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._values import convert

_HEAD, _NAME, _PARAMS, _KEY = "head", "name", "params", "key"
_BARE_NAME, _BARE_NEXT = "bare_name", "bare_next"
_VALUE, _VALUE_END, _AFTER = "value", "value_end", "after"

_MAX_WORD = 256  # a function or parameter name
_WORD = re.compile(r"[^\s<>]+")
_WORD_END = TagSet(">", "<", "\n")
# A close marker drifted from ``</parameter>``, alone on the last line of a value.
_DRIFT = re.compile(r"\n</parameter[A-Za-z0-9_-]*>?[ \t\r]*\n?\Z")
_NEXT = ("<parameter=", "</function>")


@cache
def _block_tags(block: str, block_end: str) -> tuple[TagSet, TagSet]:
    """The tags a value watches for, and those that end a broken call, for one block tag."""
    value = TagSet("</parameter>", "<parameter=", "</function>", "<function=", block, block_end)
    return value, TagSet("</function>", block_end)


class Qwen3CoderDecoder(TagDecoder):
    """Decode Qwen3-Coder ``<tool_call><function=...>`` calls out of a model's text.

    ``schemas`` maps each declared tool's name to the JSON schema of its parameters: a
    parameter whose schema type is not ``string`` is parsed as JSON or a Python literal
    (falling back to the text), a ``<parameter=KEY>`` the schema lacks cannot close the value
    before it, and a bare ``<function=NAME>`` of a declared tool is a call. Without schemas
    every value is a string, as the model wrote it, and only ``<tool_call>`` opens a call.
    """

    _OPEN = TagSet("<tool_call>")
    _AFTER_OPEN = _HEAD
    _COMMIT_ON_OPEN = True
    _BLOCK, _BLOCK_END = "<tool_call>", "</tool_call>"
    """The block's special tokens (a family member may name them otherwise)."""
    _TRIM_NEWLINES = True
    """Drop one leading and one trailing newline of a value (the template adds them)."""

    def __init__(self, schemas: Mapping[str, dict[str, Any]] | None = None) -> None:
        super().__init__()
        self._schemas: Mapping[str, dict[str, Any]] = schemas or {}
        self._name = ""
        self._word: list[str] = []  # a function or parameter name being read
        self._word_len = 0
        self._params: dict[str, Any] = {}
        self._key = ""
        self._value: list[str] = []
        self._ws: list[str] = []
        # Literal ``<function=NAME>`` and ``<tool_call>`` opened inside the current value.
        self._functions = 0
        self._blocks = 0
        self._line_start = True  # the value so far is empty or ends with a newline
        self._bare = False  # the current block opened without ``<tool_call>``
        self._value_tags, self._skip_end = _block_tags(self._BLOCK, self._BLOCK_END)
        if self._schemas:
            self._opener = TagSet(*self._OPEN.tags, "<function=")

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _HEAD: self._on_head,
            _BARE_NAME: self._on_bare_name,
            _BARE_NEXT: self._on_bare_next,
            _NAME: self._on_name,
            _PARAMS: self._on_params,
            _KEY: self._on_key,
            _VALUE: self._on_value,
            _VALUE_END: self._on_value_end,
            _AFTER: self._on_after,
            SKIP: self._on_skip,
        }

    # -- the header ----------------------------------------------------------------------

    def _opened(self, tag: str) -> None:
        self._bare = tag == "<function="
        if not self._bare:
            return
        self._committed = False  # not a special token: reverting it is no error
        if self._shown_line:
            self._state = _BARE_NAME
            self._word, self._word_len = [], 0
        else:  # mid-line: a tag quoted in prose
            self._revert("not at a line start")

    def _on_bare_name(self) -> bool:
        done, name = self._read_word(self._head_to)
        if not done:
            return False
        if name is None or name not in self._schemas:
            self._revert("not a declared tool")
        else:
            self._name, self._state = name, _BARE_NEXT
        return True

    def _on_bare_next(self) -> bool:
        # Peek only: the whitespace goes out as call markup once the tag confirms the call.
        opt = expect(self._buf, skip_space(self._buf, self._pos), _NEXT)
        if opt == "":
            return False
        if opt is None:
            self._revert("no parameter markup after the function name")
        else:
            self._begin(self._name, json_args=False)
            self._params, self._state = {}, _PARAMS
        return True

    def _on_head(self) -> bool:
        self._head_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, ("<function=",))
        if opt == "":
            return False
        if opt is None:
            self._revert("expected <function=NAME> after <tool_call>")
            return True
        self._head_to(self._pos + len(opt))
        self._state = _NAME
        self._word, self._word_len = [], 0
        return True

    def _read_word(self, take: Callable[[int], None]) -> tuple[bool, str | None]:
        """Read a name up to ``>``: ``(False, None)`` wants more; ``(True, None)`` is bad.

        ``take`` consumes up to an index (into the head, or as call markup).
        """
        start, tag = _WORD_END.scan(self._buf, self._pos)
        limit = self._pos + _MAX_WORD - self._word_len
        if start > limit:  # cut at a fixed length, so any chunking stops at one place
            take(limit)
            return True, None
        self._word.append(self._buf[self._pos : start])
        self._word_len += start - self._pos
        take(start)
        if tag is None:
            return False, None
        if tag != ">":
            return True, None
        take(start + 1)
        word = "".join(self._word).strip(SPACE)
        self._word, self._word_len = [], 0
        return True, word if _WORD.fullmatch(word) else None

    def _on_name(self) -> bool:
        done, name = self._read_word(self._head_to)
        if not done:
            return False
        if name is None:
            self._revert("not a function name")
            return True
        self._begin(name, json_args=False)
        self._name, self._params = name, {}
        self._state = _PARAMS
        return True

    # -- parameters ----------------------------------------------------------------------

    def _on_params(self) -> bool:
        self._delta_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, _NEXT)
        if opt == "":
            return False
        if opt is None:
            self._malformed("expected <parameter=KEY> or </function>")
        elif opt == "</function>":
            self._pos += len(opt)
            self._end(self._params)
            self._state, self._ws = _AFTER, []
        else:
            self._delta_to(self._pos + len(opt))
            self._state = _KEY
            self._word, self._word_len = [], 0
        return True

    def _on_key(self) -> bool:
        done, key = self._read_word(self._delta_to)
        if not done:
            return False
        if key is None:
            self._malformed("not a parameter name")
            return True
        self._key, self._value, self._functions, self._blocks = key, [], 0, 0
        self._line_start = True
        self._state = _VALUE
        return True

    def _on_value(self) -> bool:
        start, tag = self._value_tags.scan(self._buf, self._pos)
        if start > self._pos:
            self._value.append(self._buf[self._pos : start])
            self._line_start = self._buf[start - 1] == "\n"
            self._delta_to(start)
        if tag is None:
            return False
        if tag == "</parameter>":  # the close, if what follows confirms it
            self._delta_to(start + len(tag))
            self._state, self._ws = _VALUE_END, []
            return True
        # Markup counts only on a line of its own, where the template puts it: a tag
        # quoted in code (``"<function=" + name``) is value text.
        line = self._line_start
        if tag == "<function=" and line:
            name = self._word_ahead(start + len(tag))
            if name is None:
                return False
            self._functions += bool(name)  # a literal call opened in the value
        elif tag == self._BLOCK:
            self._blocks += line
        elif tag == self._BLOCK_END:
            self._blocks -= bool(self._blocks)
        elif tag == "</function>" and self._functions:
            self._functions -= 1
        elif tag != "<function=" and line and not self._functions and not self._blocks:
            # A missing ``</parameter>``, if what follows confirms it.
            ends = self._key_ahead(start) if tag == "<parameter=" else self._function_ahead(start)
            if ends is None:
                return False
            if ends:  # the params state reads the tag again
                self._close_param(implicit=True)
                return True
        self._value.append(tag)
        self._line_start = False
        self._delta_to(start + len(tag))
        return True

    def _on_value_end(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._delta_to(end)
        opt = expect(self._buf, self._pos, _NEXT)
        if opt == "":
            return False
        ends: bool | None = False
        if opt == "<parameter=":
            ends = self._key_ahead(self._pos)
        elif opt == "</function>":
            # Confirmed at once, so a field completes on the chunk that closes it; a
            # value line ending ``</parameter>`` before one starting ``</function>``
            # reads as the close, as it does for every peer.
            ends = True
        if ends is None:
            return False
        # Inside a literal call the value quotes, its tags are its own.
        ends = ends and not self._functions
        if not ends:  # the ``</parameter>`` was text of the value
            ws = "".join(self._ws)
            self._value.append("</parameter>" + ws)
            self._line_start = ws.endswith("\n")
            self._state = _VALUE
        else:
            self._close_param()
        return True

    def _word_ahead(self, first: int) -> str | None:
        """The ``NAME`` of a ``<tag=NAME>`` whose name starts at ``first``; ``""`` when it is
        not one; None when the buffer ends before that is known."""
        end = self._buf.find(">", first, first + _MAX_WORD + 1)
        if end < 0:
            rest = self._buf[first : first + _MAX_WORD + 1]
            short = len(rest) <= _MAX_WORD and _WORD_END.scan(rest, 0)[1] is None
            return None if short else ""
        word = self._buf[first:end].strip(SPACE)
        return word if _WORD.fullmatch(word) else ""

    def _key_ahead(self, at: int) -> bool | None:
        """Whether the ``<parameter=KEY>`` at ``at`` may open a parameter of this call: a
        KEY not given yet (None: not known yet)."""
        key = self._word_ahead(at + len("<parameter="))
        if key is None:
            return None
        # With the tool's schema, a key it lacks is value text (vLLM and SGLang do the same):
        # a file holding this very markup keeps it. Without one, any new key counts.
        declared = self._declared()
        fresh = bool(key) and key not in self._params and key != self._key
        return fresh and (declared is None or key in declared)

    def _declared(self) -> Mapping[str, Any] | None:
        """The parameters the current tool's schema declares, when they are all it takes."""
        schema = self._schemas.get(self._name, {})
        props = schema.get("properties")
        open_ended = schema.get("additionalProperties") not in (None, False)
        return props if isinstance(props, Mapping) and not open_ended else None

    def _function_ahead(self, at: int) -> bool | None:
        """Whether the ``</function>`` at ``at`` ends the call: ``</tool_call>`` or another
        ``<function=`` follows (None: not known yet; the end of the text also ends it)."""
        after = skip_space(self._buf, at + len("</function>"))
        if after == len(self._buf):
            return None
        opt = expect(self._buf, after, (self._BLOCK_END, "<function="))
        return None if opt == "" else opt is not None

    def _close_param(self, *, implicit: bool = False) -> None:
        raw = "".join(self._value)
        if implicit:
            # No ``</parameter>`` came: a drifted one (``</parameter1>``) on the value's
            # last line was meant as it (docs/decoding.md, "Variants").
            drift = _DRIFT.search(raw)
            raw = raw if drift is None else raw[: drift.start() + 1]
        if self._TRIM_NEWLINES:
            raw = raw[1:] if raw.startswith("\n") else raw
            raw = raw[:-1] if raw.endswith("\n") else raw
        schema = self._schemas.get(self._name, {}).get("properties", {}).get(self._key)
        value = self._params[self._key] = convert(raw, schema)
        self._value = []
        self._delta("", (self._key,), (value,))
        self._state = _PARAMS

    # -- after a function ----------------------------------------------------------------

    def _on_after(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._pos = end
        opt = expect(self._buf, self._pos, (self._BLOCK_END, "<function="))
        if opt == "":
            return False
        ws, self._ws = "".join(self._ws), []
        self._state = TEXT
        if opt is None:  # no ``</tool_call>``: what follows is text
            self._emit_text(ws)
        elif opt == self._BLOCK_END:
            self._pos += len(opt)
        else:  # another function in the same block (held to the same rule as the first)
            if self._bare:  # no block holds it: if it reverts, no text may be lost
                self._emit_text(ws)
            self._pos += len(opt)
            self._head, self._committed = [opt], not self._bare
            self._state = _BARE_NAME if self._bare else _NAME
            self._word, self._word_len = [], 0
        return True

    def _on_skip(self) -> bool:
        start, tag = self._skip_end.scan(self._buf, self._pos)
        self._delta_to(start)
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._state, self._ws = (_AFTER if tag == "</function>" else TEXT), []
        return True

    def _close_call(self, rest: str) -> None:
        implicit = self._state == _VALUE and self._line_start and not self._blocks
        if (
            (implicit or self._state == _VALUE_END)
            and not self._functions
            and rest.startswith("</function>")
            and not rest[len("</function>") :].strip(SPACE)
        ):
            # The text ended after a ``</function>`` whose ``</tool_call>`` never came.
            self._close_param(implicit=implicit)
            self._delta(rest)
            self._end(self._params)
            return
        super()._close_call(rest)

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


__all__ = ["Qwen3CoderDecoder"]

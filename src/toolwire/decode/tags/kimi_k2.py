"""Kimi K2 tool calls: special tokens around ``functions.NAME:IDX`` and a JSON object.

As Moonshot's chat template renders a section (one or more calls)::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    text -> section -> id -> arg_begin -> wrap -> call_end -> section -> ... -> text
                        \\-> skip_id -> section   (a header that is no call)

* Every marker is a special token, so the section is tool-call markup from the start. A
  ``<|tool_call_begin|>`` without its section (a model that dropped the first token) opens a
  call too. vLLM's spelling ``<|tool_call_section_begin|>`` is read as well.
* section: whitespace, then ``<|tool_call_begin|>``, or ``<|tool_calls_section_end|>`` (the
  section ends; what follows is text). Right after the section opened, anything else reverts
  the section to text with a ``StreamError``; after a call, it is text (the model forgot the
  section's end).
* id: ``functions.NAME:IDX`` (``functions.`` optional), whitespace allowed around it. The
  call starts (``ToolCallStart``) on the chunk that ends the id, the name being the text
  before the last ``:IDX``. The ids are toolwire's (``call_<n>``), as for every text format.
  An id that is not one (``functions.get.0``, a bare ``0``) is no call: inside a section its
  markup up to ``<|tool_call_end|>`` goes into a ``StreamError`` and the section goes on;
  a ``<|tool_call_begin|>`` without a section reverts to text (with a ``StreamError``).
* wrap: after ``<|tool_call_argument_begin|>`` the JSON object streams as the call's
  arguments (``_wrapper.Wrapper(value_only=True)``: ``ToolCalls`` parses it and reports the
  completed ``fields``). Arguments that break (``{"city": "Beijing"<|tool_call_end|>``)
  fail the call at ``<|tool_call_end|>``: they are reported, never run.
* call_end: whitespace, then ``<|tool_call_end|>``. A complete object ends the call even if
  the marker is missing (the text ended, or the next marker came).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._wrapper import Wrapper
from toolwire.events import StreamError

_SECTION, _ID, _ARG_BEGIN, _WRAP, _CALL_END, _SKIP_ID = (
    "section",
    "id",
    "arg_begin",
    "wrap",
    "call_end",
    "skip_id",
)
_SECTION_OPEN = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")
_SECTION_CLOSE = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
_CALL_BEGIN = "<|tool_call_begin|>"
_ARG = "<|tool_call_argument_begin|>"
_CALL_CLOSE = "<|tool_call_end|>"
_SECTION_NEXT = (_CALL_BEGIN, *_SECTION_CLOSE)
_ID_RE = re.compile(
    r"[ \t\r\n]{0,16}(?:functions\.)?([\w.:/-]{1,256}?):\d{1,9}[ \t\r\n]{0,16}(?=<)"
)
_ID_PART = re.compile(r"[ \t\r\n]{0,16}[\w.:/-]{0,276}[ \t\r\n]{0,16}")
_SKIP_END = TagSet(_CALL_CLOSE, *_SECTION_CLOSE)


class KimiK2Decoder(TagDecoder):
    """Decode Kimi K2 ``<|tool_calls_section_begin|>`` sections out of a model's text.

    ``schemas``: the declared tools (name -> parameters schema). The arguments are JSON, so
    they need no schema to be typed; the parameter is there so that every text decoder is
    built the same way.
    """

    _OPEN = TagSet(*_SECTION_OPEN, _CALL_BEGIN)
    _AFTER_OPEN = _SECTION
    _COMMIT_ON_OPEN = True

    def __init__(self, schemas: Mapping[str, dict[str, Any]] | None = None) -> None:
        super().__init__()
        del schemas  # JSON arguments carry their own types
        self._wrapper = Wrapper(value_only=True)
        self._ws: list[str] = []
        self._in_section = False

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _SECTION: self._on_section,
            _ID: self._on_id,
            _ARG_BEGIN: self._on_arg_begin,
            _WRAP: self._on_wrap,
            _CALL_END: self._on_call_end,
            _SKIP_ID: self._on_skip_id,
            SKIP: self._on_skip,
        }

    def _opened(self, tag: str) -> None:
        self._in_section = tag != _CALL_BEGIN
        if not self._in_section:  # a call without its section
            self._state = _ID

    # -- the section ---------------------------------------------------------------------

    def _on_section(self) -> bool:
        end = skip_space(self._buf, self._pos)
        if self._head:  # the section just opened: its markup is held until a call starts
            self._head_to(end)
        else:
            self._ws.append(self._buf[self._pos : end])
            self._pos = end
        opt = expect(self._buf, self._pos, _SECTION_NEXT)
        if opt == "":
            return False
        ws, self._ws = "".join(self._ws), []
        if opt is None:
            if self._head:
                self._revert("expected <|tool_call_begin|> in a tool-call section")
            else:  # the section's end never came: what follows is text
                self._emit_text(ws)
                self._state = TEXT
        elif opt in _SECTION_CLOSE:
            self._pos += len(opt)
            self._head, self._committed, self._state = [], False, TEXT
        else:
            self._head_to(self._pos + len(opt))
            self._committed, self._state = True, _ID
        return True

    def _on_id(self) -> bool:
        m = _ID_RE.match(self._buf, self._pos)
        if m is None:
            part = _ID_PART.match(self._buf, self._pos)
            if part is not None and part.end() == len(self._buf):
                return False  # the id may still complete
            if self._in_section:
                self._state = _SKIP_ID
            else:  # no section holds it: a token named in prose, say
                self._revert("not a call id after <|tool_call_begin|>")
            return True
        self._head_to(m.end())
        self._begin(m.group(1), json_args=True)
        self._state = _ARG_BEGIN
        return True

    def _on_skip_id(self) -> bool:
        start, tag = _SKIP_END.scan(self._buf, self._pos)
        self._head_to(start)
        if tag is None:
            return False
        self._head_to(start + len(tag))
        raw, self._head, self._committed = "".join(self._head), [], False
        self._out.append(StreamError("malformed tool-call markup: not a call id", raw))
        self._state = _SECTION if tag == _CALL_CLOSE else TEXT
        return True

    # -- the call ------------------------------------------------------------------------

    def _on_arg_begin(self) -> bool:
        opt = expect(self._buf, self._pos, (_ARG,))
        if opt == "":
            return False
        if opt is None:
            self._malformed("expected <|tool_call_argument_begin|> after the call id")
            return True
        self._pos += len(opt)
        self._wrapper, self._state = Wrapper(value_only=True), _WRAP
        return True

    def _on_wrap(self) -> bool:
        return self._json_arguments(self._wrapper, _CALL_END)

    def _on_call_end(self) -> bool:
        at = skip_space(self._buf, self._pos)
        opt = expect(self._buf, at, (_CALL_CLOSE,))
        if opt == "":
            return False
        if opt:
            self._pos = at + len(opt)
        self._end()
        self._state = _SECTION
        return True

    def _on_skip(self) -> bool:
        start, tag = _SKIP_END.scan(self._buf, self._pos)
        self._pos = start  # what follows a break is not argument text
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._state = _SECTION if tag == _CALL_CLOSE else TEXT
        return True

    # -- the end of the text -------------------------------------------------------------

    def _close_call(self, rest: str) -> None:
        if self._state in (_WRAP, _CALL_END) and self._wrapper.between_members:
            self._end()  # the arguments were whole: only the end marker is missing
        else:
            self._fail(self._error or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


__all__ = ["KimiK2Decoder"]

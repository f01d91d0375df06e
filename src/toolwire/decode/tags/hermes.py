"""Hermes / Qwen JSON tool calls: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    text -> wrap -> after -> text
              \\-> skip -> text

* text: ``<tool_call>`` opens a block. It is a special token of these models, so the
  block counts as tool-call markup from the start (a broken header reports a
  ``StreamError`` before its text is shown).
* wrap: ``_wrapper.Wrapper`` walks the JSON object. ``ToolCallStart`` goes out on the
  chunk that closes the ``"name"`` string. The ``arguments`` (or ``parameters``) value
  streams as ``ToolCallDelta`` text, as the model wrote it, so ``ToolCalls`` parses it
  with ``JsonStream`` and reports completed ``fields``; a string-encoded value streams
  decoded. Arguments written before the name wait in the wrapper until the name comes.
  The call ends at the object's closing ``}``: no argument can change after it.
* Before the name, a broken object (or one that closes without a name) reverts to text.
  After it, a broken object fails the call: skip to ``</tool_call>``, then end it with
  the error and the argument text received. Leniency: when ``<`` comes right after
  a complete member (the model dropped the final ``}``), the call ends normally.
* after: whitespace, then ``</tool_call>`` (markup, dropped); anything else is text, and
  so is the whitespace before it (the model forgot the closing tag).

With the declared tools (``HermesDecoder(schemas)``), llama.cpp's other forms are calls too,
each only at a line start (a form quoted mid-line is prose) and only for a declared name:

* ``<function=NAME>{...}</function>`` and ``<function name="NAME">{...}</function>``: the
  header is held, uncommitted, until the ``{`` of its body; then the call starts and the
  object streams as its arguments (``Wrapper(value_only=True)``), ending at its ``}``.
* a JSON object whose first key is ``"name"`` and second ``"arguments"`` (or
  ``"parameters"``), bare or alone in a code fence (any info string): the call starts on the
  chunk that closes that second key; an object whose first key is another, whose name is not
  declared, or whose second key is another (a tool's definition: ``"description"``), or
  that ends without one, reverts to text as soon as that shows.

Anything else stays text, without an error: other wrappers (``<tool>``, ``<response>``),
JSON after prose on the same line, undeclared names. A broken body after the start fails the
call (it was shown as a call; it is reported, never run).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._wrapper import Wrapper

_WRAP, _AFTER = "wrap", "after"
_FN_HEAD, _FN_BODY, _FENCE = "fn_head", "fn_body", "fence"
_CLOSE = "</tool_call>"
_FN_CLOSE = "</function>"
_FN_EQ, _FN_ATTR, _FENCE_TAG = "<function=", '<function name="', "```"
_LENIENT = TagSet("<tool_call>", _FN_EQ, _FN_ATTR, _FENCE_TAG, "{")
# A function header's rest: the name and its end, complete or (``_PART``) still possible.
_HEADS = {
    _FN_EQ: (re.compile(r'([^\s<>"]{1,256})>'), re.compile(r'[^\s<>"]{0,256}')),
    _FN_ATTR: (
        re.compile(r'([^\s<>"]{1,256})"[ \t]{0,16}>'),
        re.compile(r'[^\s<>"]{0,256}(?:"[ \t]{0,16})?'),
    ),
}
_ENDS = {tag: TagSet(tag) for tag in (_CLOSE, _FN_CLOSE, _FENCE_TAG)}
_INFO = re.compile(r"[A-Za-z0-9_+.-]{0,32}\r?\n")  # a fence's info string and line end
_INFO_PART = re.compile(r"[A-Za-z0-9_+.-]{0,32}\r?")


class HermesDecoder(TagDecoder):
    """Decode ``<tool_call>{json}</tool_call>`` calls out of a model's text."""

    _OPEN = TagSet("<tool_call>")
    _AFTER_OPEN = _WRAP
    _COMMIT_ON_OPEN = True

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        """``schemas``: the declared tools by name (their schemas are not needed here)."""
        super().__init__()
        self._tools = frozenset(schemas or ())
        self._wrapper = Wrapper()
        self._ws: list[str] = []
        self._close: str | None = _CLOSE  # what ends the current block, if anything
        self._bare = False  # the block is a JSON object with no special token
        self._fn_tag = ""
        self._fn_name = ""
        if self._tools:
            self._opener = _LENIENT

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _WRAP: self._on_wrap,
            _AFTER: self._on_after,
            SKIP: self._on_skip,
            _FN_HEAD: self._on_fn_head,
            _FN_BODY: self._on_fn_body,
            _FENCE: self._on_fence,
        }

    def _opened(self, tag: str) -> None:
        self._wrapper = Wrapper()
        self._close, self._bare = _CLOSE, False
        if tag == "<tool_call>":
            return
        self._committed = False  # no special token: reverting is no error
        if not self._shown_line:  # mid-line: quoted in prose
            self._revert("not at a line start")
        elif tag == "{":  # the wrapper reads the object from its brace
            self._pos -= 1
            self._head, self._close, self._bare = [], None, True
        elif tag == _FENCE_TAG:
            self._state = _FENCE
        else:
            self._fn_tag, self._state = tag, _FN_HEAD

    # -- llama.cpp's other forms (only with the tool list) -------------------------------

    def _on_fn_head(self) -> bool:
        whole, part = _HEADS[self._fn_tag]
        m = whole.match(self._buf, self._pos)
        if m is None:
            if part.match(self._buf, self._pos).end() == len(self._buf):  # type: ignore[union-attr]
                return False  # the name may still complete
            self._revert("not a function header")
        elif m.group(1) not in self._tools:
            self._revert("not a declared tool")
        else:
            self._head_to(m.end())
            self._fn_name, self._state = m.group(1), _FN_BODY
        return True

    def _on_fn_body(self) -> bool:
        at = skip_space(self._buf, self._pos)
        if at == len(self._buf):
            return False
        if self._buf[at] != "{":
            self._revert("the function body is not a JSON object")
            return True
        self._head_to(at)
        self._begin(self._fn_name, json_args=True)
        self._wrapper, self._close = Wrapper(value_only=True), _FN_CLOSE
        self._state = _WRAP
        return True

    def _on_fence(self) -> bool:
        m = _INFO.match(self._buf, self._pos)
        if m is None:
            if _INFO_PART.match(self._buf, self._pos).end() == len(self._buf):  # type: ignore[union-attr]
                return False
            self._revert("not a code fence")
            return True
        at = skip_space(self._buf, m.end())
        if at == len(self._buf):
            return False
        if self._buf[at] != "{":
            self._revert("the code fence holds no JSON object")
            return True
        self._head_to(at)
        self._close, self._bare, self._state = _FENCE_TAG, True, _WRAP
        return True

    def _on_wrap(self) -> bool:
        wrapper = self._wrapper
        end = wrapper.run(self._buf, self._pos)
        if self._call is None:
            self._head_to(end)
        self._pos = end
        if self._bare and self._call is None and not self._named(wrapper):
            return True
        self._stream_call(wrapper, bare=self._bare)
        if wrapper.error is not None:
            self._broken(wrapper.error)
        elif wrapper.done or (self._close == _FN_CLOSE and wrapper.between_members):
            self._whole()
        else:
            return False
        return True

    def _named(self, wrapper: Wrapper) -> bool:
        """A bare object stays a candidate while it may still be a call of a declared tool
        (``Wrapper.not_a_call``)."""
        why = wrapper.not_a_call(self._tools)
        if why is not None:
            self._revert(why)
        return why is None

    def _broken(self, error: str) -> None:
        if self._call is None:
            self._revert(error)
        elif self._wrapper.between_members and self._buf.startswith("<", self._pos):
            self._whole()  # ``</tool_call>`` where the final ``}`` should be
        elif self._close is None:  # nothing to skip to: fail now, the rest is text
            self._fail(f"malformed tool call: {error}")
            self._state = TEXT
        else:
            self._malformed(error)

    def _whole(self) -> None:
        if self._call is None:
            self._revert("the tool call has no name")
            return
        self._end()
        self._state = TEXT if self._close is None else _AFTER
        self._ws = []

    def _on_after(self) -> bool:
        assert self._close is not None
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._pos = end
        opt = expect(self._buf, self._pos, (self._close,))
        if opt == "":
            return False
        if opt:
            self._pos += len(opt)
        else:
            self._emit_text("".join(self._ws))
        self._ws = []
        self._state = TEXT
        return True

    def _on_skip(self) -> bool:
        # What follows a break is not argument text: it is dropped, not fed to JsonStream.
        start, tag = _ENDS[self._close or _CLOSE].scan(self._buf, self._pos)
        self._pos = start
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._state = TEXT
        return True

    def _close_call(self, rest: str) -> None:
        if self._state == _WRAP and self._wrapper.between_members:
            self._end()
        else:
            self._fail(self._error or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


__all__ = ["HermesDecoder"]

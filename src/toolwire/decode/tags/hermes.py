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
"""

from __future__ import annotations

from collections.abc import Callable

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._wrapper import Wrapper

_WRAP, _AFTER = "wrap", "after"
_CLOSE = "</tool_call>"
_BLOCK_END = TagSet(_CLOSE)


class HermesDecoder(TagDecoder):
    """Decode ``<tool_call>{json}</tool_call>`` calls out of a model's text."""

    _OPEN = TagSet("<tool_call>")
    _AFTER_OPEN = _WRAP
    _COMMIT_ON_OPEN = True

    def __init__(self) -> None:
        super().__init__()
        self._wrapper = Wrapper()
        self._ws: list[str] = []

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {_WRAP: self._on_wrap, _AFTER: self._on_after, SKIP: self._on_skip}

    def _opened(self, tag: str) -> None:
        self._wrapper = Wrapper()

    def _on_wrap(self) -> bool:
        wrapper = self._wrapper
        end = wrapper.run(self._buf, self._pos)
        if self._call is None:
            self._head_to(end)
        self._pos = end
        if self._call is None and wrapper.name is not None:
            self._begin(wrapper.name, json_args=True)
        if self._call is not None:
            for piece in wrapper.args:
                self._delta(piece)
            wrapper.args.clear()
        if wrapper.error is not None:
            self._broken(wrapper.error)
        elif wrapper.done:
            self._whole()
        else:
            return False
        return True

    def _broken(self, error: str) -> None:
        if self._call is None:
            self._revert(error)
        elif self._wrapper.between_members and self._buf.startswith("<", self._pos):
            self._whole()  # ``</tool_call>`` where the final ``}`` should be
        else:
            self._malformed(error)

    def _whole(self) -> None:
        if self._call is None:
            self._revert("the tool call has no name")
            return
        self._end()
        self._state = _AFTER
        self._ws = []

    def _on_after(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._pos = end
        opt = expect(self._buf, self._pos, (_CLOSE,))
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
        start, tag = _BLOCK_END.scan(self._buf, self._pos)
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

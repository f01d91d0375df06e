"""MiniMax-M2 tool calls: ``<minimax:tool_call><invoke name="NAME"><parameter name="K">V...``.

As MiniMax's chat template renders a block (one or more calls)::

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Seattle</parameter>
    <parameter name="days">5</parameter>
    </invoke>
    </minimax:tool_call>

The template writes a string value as it is and any other value as JSON: a value is raw
text that the tool's schema types (``_values.convert``), as for Qwen3-Coder.

Theory of operation (the frame is ``_machine.TagDecoder``, the arguments ``_kv``)
-----------------------------------------------------------------------------
States::

    text -> block -> invoke -> params <-> key -> value -> value_end  (``_kv``)
              ^                  \\-> ``</invoke>``: the call ends -> block
              +-- ``</minimax:tool_call>`` -> text; anything else -> text

* ``<minimax:tool_call>`` is a special token: the block is tool-call markup from the start;
  if no ``<invoke name=`` follows (after whitespace) it reverts to text with a
  ``StreamError``.
* invoke: the attribute up to ``>`` (at most ``_MAX_NAME`` chars), the name quoted with
  ``"`` or ``'`` or bare. ``ToolCallStart`` goes out on the chunk holding that ``>``.
* After ``</invoke>``: whitespace, then ``<invoke name=`` (another call in the block),
  ``</minimax:tool_call>`` (dropped), or text: a block the model (or a server that turned
  the closing token into nothing) left open ends at its last ``</invoke>``.
* A call ends only at ``</invoke>``: a text that ends before it fails the call.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._kv import KeyValueDecoder
from toolwire.decode.tags._machine import TEXT

_BLOCK, _INVOKE = "block", "invoke"
_OPEN_TAG, _CLOSE_TAG = "<minimax:tool_call>", "</minimax:tool_call>"
_INVOKE_TAG = "<invoke name="
_MAX_NAME = 300
_ATTR = r"""[ \t]*(?P<q>["']?)(?P<{}>[^"'<>\s]{{1,256}})(?P=q)[ \t]*"""
_INVOKE_RE = re.compile(_ATTR.format("name"))


class MiniMaxM2Decoder(KeyValueDecoder):
    """Decode MiniMax-M2 ``<minimax:tool_call><invoke ...>`` calls out of a model's text.

    ``schemas`` maps each declared tool's name to the JSON schema of its parameters: a value
    whose schema type is not ``string`` is read as JSON (or a Python literal); without a
    schema every value is the string the model wrote.
    """

    _OPEN = TagSet(_OPEN_TAG)
    _AFTER_OPEN = _BLOCK
    _COMMIT_ON_OPEN = True
    _KEY_OPEN = "<parameter name="
    _KEY_STOP = ">"
    _KEY_RE = re.compile(_ATTR.format("key"))
    _VALUE_CLOSE = "</parameter>"
    _CALL_CLOSE = "</invoke>"

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {_BLOCK: self._on_block, _INVOKE: self._on_invoke, **self._kv_table()}

    def _on_block(self) -> bool:
        end = skip_space(self._buf, self._pos)
        if self._head:  # the block just opened: its markup is held until a call starts
            self._head_to(end)
        else:
            self._ws.append(self._buf[self._pos : end])
            self._pos = end
        opt = expect(self._buf, self._pos, (_INVOKE_TAG, _CLOSE_TAG))
        if opt == "":
            return False
        ws, self._ws = "".join(self._ws), []
        if opt is None:
            if self._head:
                self._revert(f"expected {_INVOKE_TAG}... after {_OPEN_TAG}")
            else:  # the block's closing tag never came: what follows is text
                self._emit_text(ws)
                self._state = TEXT
        elif opt == _CLOSE_TAG:
            self._pos += len(opt)
            self._head, self._committed, self._state = [], False, TEXT
        else:
            self._head_to(self._pos + len(opt))
            self._committed, self._state = True, _INVOKE
        return True

    def _on_invoke(self) -> bool:
        end = self._buf.find(">", self._pos, self._pos + _MAX_NAME + 1)
        if end < 0:
            if len(self._buf) - self._pos <= _MAX_NAME:
                return False  # the name may still end within its limit
            self._revert("a tool name longer than any")
            return True
        m = _INVOKE_RE.fullmatch(self._buf, self._pos, end)
        if m is None:
            self._revert("not a tool name")
            return True
        self._head_to(end + 1)
        self._start_call(m.group("name"))
        return True

    def _ended(self) -> None:
        self._state, self._ws = _BLOCK, []

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


__all__ = ["MiniMaxM2Decoder"]

"""Seed-OSS tool calls: the Qwen3-Coder markup inside ``<seed:tool_call>`` blocks.

As ByteDance's Seed-OSS chat template renders a call::

    <seed:tool_call>
    <function=get_weather>
    <parameter=location>Barcelona, Spain</parameter>
    </function>
    </seed:tool_call>

Everything inside the block is read by ``qwen.Qwen3CoderDecoder`` (values streamed raw,
typed by the tool's schema). Three things differ:

* the block's tokens are ``<seed:tool_call>`` / ``</seed:tool_call>``;
* the template writes a value inline (``<parameter=K>V</parameter>``, its own system prompt
  shows a multi-line value so): a value is exactly the text between its tags, so a file's
  final newline stays;
* the model thinks in ``<seed:think>`` ... ``</seed:think>`` before it answers, and often
  spells out the call it is about to make there. A server that does not split the reasoning
  off passes the think block on as text: it stays text, verbatim, and nothing inside it is a
  call (the call that counts is the one after ``</seed:think>``). A think block the text
  never closes stays text to the end.
"""

from __future__ import annotations

from collections.abc import Callable

from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._machine import TEXT
from toolwire.decode.tags.qwen import Qwen3CoderDecoder

_THINK, _THINK_END = "<seed:think>", "</seed:think>"
_IN_THINK = "think"
_THINK_CLOSE = TagSet(_THINK_END)


class SeedOssDecoder(Qwen3CoderDecoder):
    """Decode Seed-OSS ``<seed:tool_call>`` calls out of a model's text (see the module doc).

    ``schemas``: the declared tools (name -> parameters schema), as for Qwen3-Coder.
    """

    _OPEN = TagSet("<seed:tool_call>", _THINK)
    _BLOCK, _BLOCK_END = "<seed:tool_call>", "</seed:tool_call>"
    _TRIM_NEWLINES = False

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {**super()._table(), _IN_THINK: self._on_think}

    def _opened(self, tag: str) -> None:
        if tag != _THINK:
            super()._opened(tag)
            return
        self._head, self._committed = [], False
        self._emit_text(tag)
        self._state = _IN_THINK

    def _on_think(self) -> bool:
        start, tag = _THINK_CLOSE.scan(self._buf, self._pos)
        self._text_to(start)
        if tag is None:
            return False
        self._text_to(start + len(tag))
        self._state = TEXT
        return True


__all__ = ["SeedOssDecoder"]

"""Llama's JSON tool call left in the answer: ``{"name": NAME, "parameters": {...}}``.

Llama 3.x and 4 write a call as one bare JSON object (``parameters`` or ``arguments``);
a server without the matching parser hands it over as the answer's text. This decoder is
a rescue candidate only (``decode.rescue``): a reading narrow enough to run on every
native backend's text. It is the Hermes decoder's bare-object form (``hermes.py``) with
three limits:

* the object must open the text (whitespace before it at most): JSON after any prose,
  in a code fence or quoted, is text;
* its first key is ``name`` and the name a declared tool (the Hermes rules);
* it carries its arguments: an object that ends without ``parameters`` or ``arguments``
  fails, which the rescue reads as "not a call" (its text stays text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._machine import TEXT
from toolwire.decode.tags.hermes import HermesDecoder

_OPEN = TagSet("{")


class LlamaJsonLeak(HermesDecoder):
    """A bare JSON call object at the very start of the text, for a declared tool."""

    def __init__(self, schemas: Mapping[str, Any]) -> None:
        super().__init__(schemas)
        self._opener = _OPEN
        self._spoke = False  # some text other than whitespace went out
        self._args = False  # the open call received argument text

    def _emit_text(self, text: str) -> None:
        self._spoke = self._spoke or bool(text.strip())
        super()._emit_text(text)

    def _opened(self, tag: str) -> None:
        if self._spoke:
            self._committed = False
            self._revert("not at the start of the text")
            return
        self._args = False
        super()._opened(tag)

    def _delta(self, text: str, fields: tuple[str, ...] = (), values: tuple[Any, ...] = ()) -> None:
        self._args = self._args or bool(text)
        super()._delta(text, fields, values)

    def _whole(self) -> None:
        if self._call is not None and not self._args:
            self._fail("the object has no arguments")
            self._state = TEXT
            self._spoke = True
            return
        super()._whole()


__all__ = ["LlamaJsonLeak"]

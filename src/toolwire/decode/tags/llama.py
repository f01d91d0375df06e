"""Llama 3.1 to 4 JSON tool calls: ``{"name": ..., "parameters": {...}}``, ``;`` between calls.

The Llama 3.1, 3.2 and 3.3 chat templates ask for one JSON object per call,
``{"name": NAME, "parameters": {...}}``; the model may begin it with the special token
``<|python_tag|>`` (and Llama 4's JSON template writes ``arguments``: both keys are read).
Several calls are written one after another, separated by ``;`` (or a newline).

* ``<|python_tag|>`` followed by a JSON object (or a list of them) is a call whatever the
  name. Followed by anything else it is the model's code for its built-in interpreter, and
  stays text without an error.
* Without the token, a JSON object is a call only with the declared tools: it must start a
  line (an object after prose on the same line is quoted, not a call) outside a Markdown
  code fence (a fenced object is an example, ``_fence``), its first key must be
  ``name``, and the name must be a declared tool. It reverts to text as soon as one of these
  fails; the call starts on the chunk that closes a declared name.
* After a call, ``;`` and the next object continue the block; anything else is text.

The frame and the objects are ``_jsoncalls.JsonCallsDecoder``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.decode.tags._fence import FenceTracker
from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._jsoncalls import JsonCallsDecoder, dumps

_TAG = "<|python_tag|>"


class Llama3JsonDecoder(JsonCallsDecoder):
    """Decode Llama 3's JSON calls out of a model's text."""

    _OPEN = TagSet(_TAG)
    _COMMIT_ON_OPEN = True
    _SEPARATORS = ";"

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        super().__init__(schemas)
        self._fence = FenceTracker()
        if self._tools:
            self._opener = TagSet(_TAG, "{")

    def _emit_text(self, text: str) -> None:
        super()._emit_text(text)
        self._fence.feed(text)

    def _opened(self, tag: str) -> None:
        self._bare = tag == "{"
        if not self._bare:
            return
        self._committed = False  # no special token: reverting it is no error
        if not self._shown_line or self._fence.inside:  # quoted in prose, or an example
            self._revert("not at a line start, or in a code block")
            return
        self._pos -= 1  # the wrapper reads the object from its brace
        self._head = []
        self._object()

    def _not_a_list(self) -> None:
        self._committed = False  # code for the built-in interpreter, not broken markup
        self._revert("no JSON call after <|python_tag|>")


def render(name: str, arguments: Mapping[str, Any]) -> str:
    return dumps({"name": name, "parameters": dict(arguments)})


__all__ = ["Llama3JsonDecoder", "render"]

"""Mistral tool calls: ``[TOOL_CALLS][{...}, ...]`` and ``[TOOL_CALLS]NAME[ARGS]{...}``.

Mistral's tokenizers changed the form twice, and servers meet all three:

* before v11: ``[TOOL_CALLS]`` and a JSON list of ``{"name": ..., "arguments": {...}}``
  objects (the name may come after the arguments);
* v11: ``[TOOL_CALLS]NAME{...}``, one marker per call;
* v13 on: ``[TOOL_CALLS]NAME[ARGS]{...}`` (``[CALL_ID]ID`` may sit before ``[ARGS]``).

``[TOOL_CALLS]`` is a special token: markup after it that is none of these reverts to text
with a ``StreamError``. In the named forms the call starts on the chunk that shows the
arguments begin (``{`` or ``[ARGS]`` after a complete name); the object streams as its
arguments and the call ends at its ``}``. The list form is ``_jsoncalls``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet, expect
from toolwire.decode.tags._jsoncalls import JsonCallsDecoder, dumps

_NAMED, _CALL_ID = "named", "call_id"
_MAX_NAME = 256
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,256}")
_ID = re.compile(r"[A-Za-z0-9_-]{0,64}")
_ARGS, _ID_TAG = "[ARGS]", "[CALL_ID]"


class MistralDecoder(JsonCallsDecoder):
    """Decode Mistral's ``[TOOL_CALLS]`` calls out of a model's text, in all three forms."""

    _OPEN = TagSet("[TOOL_CALLS]")
    _COMMIT_ON_OPEN = True

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        super().__init__(schemas)
        self._name = ""

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {**super()._table(), _NAMED: self._on_named, _CALL_ID: self._on_call_id}

    def _opened(self, tag: str) -> None:
        self._bare = False

    def _not_a_list(self) -> None:
        self._state = _NAMED

    def _on_named(self) -> bool:
        m = _NAME.match(self._buf, self._pos)
        end = m.end() if m else self._pos
        if end == len(self._buf) and end - self._pos < _MAX_NAME:
            return False  # the name may go on
        if m is None:
            self._revert("no tool name after [TOOL_CALLS]")
            return True
        opt = expect(self._buf, end, ("{", _ARGS, _ID_TAG))
        if opt == "":
            return False
        if opt is None:
            self._revert("no arguments after the tool name")
            return True
        self._name = m.group()
        self._head_to(end)
        self._state = _CALL_ID if opt == _ID_TAG else self._arguments(opt)
        return True

    def _on_call_id(self) -> bool:
        start = self._pos + len(_ID_TAG)
        end = _ID.match(self._buf, start).end()  # type: ignore[union-attr]  # always matches
        opt = expect(self._buf, end, (_ARGS,))
        if opt == "":
            return False
        if opt is None:
            self._revert("no [ARGS] after the call id")
            return True
        self._head_to(end)
        self._state = self._arguments(opt)
        return True

    def _arguments(self, opt: str) -> str:
        """The call starts where its arguments begin (after ``[ARGS]``, at ``{``)."""
        if opt == _ARGS:
            self._head_to(self._pos + len(_ARGS))
        self._begin(self._name, json_args=True)
        self._object(value_only=True)
        return self._state


def render(name: str, arguments: Mapping[str, Any]) -> str:
    return f"[TOOL_CALLS]{name}{_ARGS}{dumps(dict(arguments))}"


__all__ = ["MistralDecoder", "render"]

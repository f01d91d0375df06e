"""GLM-4.5 / 4.6 / 4.7 tool calls: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V...``.

As Zhipu's chat template renders a call (GLM-4.7 drops the newlines)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Beijing</arg_value>
    <arg_key>days</arg_key>
    <arg_value>3</arg_value>
    </tool_call>

The template writes a string value as it is and any other value as JSON, so a value is raw
text that the tool's schema types (``_values.convert``), as for Qwen3-Coder.

Theory of operation (the frame is ``_machine.TagDecoder``, the arguments ``_kv``)
-----------------------------------------------------------------------------
States::

    text -> name -> params <-> key -> value -> value_end  (``_kv``)
                      \\-> ``</tool_call>``: the call ends -> text

* ``<tool_call>`` is one of the model's special tokens: the block is tool-call markup from
  the start, and a block that breaks before its name is complete reverts to text with a
  ``StreamError``.
* name: right after ``<tool_call>`` (the template leaves no space), the name (word
  characters, ``. : / -``, at most 256), then a newline (spaces before it allowed) or at
  once the ``<`` of the next tag. ``ToolCallStart`` goes out on the chunk that holds that
  newline or ``<``. JSON (``{"name": ...}``, Hermes's form) or prose after ``<tool_call>``
  (``<tool_call> and </tool_call>``) is no name: it reverts.
* A call ends only at ``</tool_call>``: a text that ends before it (cut by ``max_tokens``)
  fails the call, since more arguments may have been coming.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from toolwire.decode.tags._holdback import TagSet
from toolwire.decode.tags._kv import KeyValueDecoder
from toolwire.decode.tags._machine import TEXT

_NAME_STATE = "name"
_NAME = re.compile(r"([\w.:/-]{1,256})(?:[ \t\r]{0,64}\n|(?=<))")
_NAME_PART = re.compile(r"[\w.:/-]{0,256}[ \t\r]{0,64}")


class Glm45Decoder(KeyValueDecoder):
    """Decode GLM-4.5 ``<tool_call>NAME<arg_key>...`` calls out of a model's text.

    ``schemas`` maps each declared tool's name to the JSON schema of its parameters: a value
    whose schema type is not ``string`` is read as JSON (or a Python literal); without a
    schema every value is the string the model wrote.
    """

    _OPEN = TagSet("<tool_call>")
    _AFTER_OPEN = _NAME_STATE
    _COMMIT_ON_OPEN = True
    _KEY_OPEN = "<arg_key>"
    _KEY_STOP = "<arg_value>"
    _KEY_RE = re.compile(r"[ \t]*(?P<key>[^<>\n]{1,256}?)[ \t]*</arg_key>[ \t\r\n]*")
    _VALUE_CLOSE = "</arg_value>"
    _CALL_CLOSE = "</tool_call>"

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {_NAME_STATE: self._on_name, **self._kv_table()}

    def _on_name(self) -> bool:
        m = _NAME.match(self._buf, self._pos)
        if m is None:
            part = _NAME_PART.match(self._buf, self._pos)
            if part is not None and part.end() == len(self._buf):
                return False  # the name may still complete
            self._revert("expected a tool name after <tool_call>")
            return True
        self._head_to(m.end())
        self._start_call(m.group(1))
        return True

    def _ended(self) -> None:
        self._state = TEXT


__all__ = ["Glm45Decoder"]

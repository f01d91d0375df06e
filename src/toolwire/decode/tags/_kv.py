"""The part GLM-4.5 and MiniMax-M2 calls share: key/value markup after the tool's name.

Both formats write each argument as a key tag and a raw value up to a closing tag::

    GLM-4.5     <arg_key>city</arg_key><arg_value>Paris</arg_value>  ... </tool_call>
    MiniMax-M2  <parameter name="city">Paris</parameter>              ... </invoke>

Theory of operation (the frame is ``_machine.TagDecoder``; a subclass reads the header and
calls ``_start_call(name)``)
---------------------------------------------------------------------------------------
States::

    params -> key -> value -> value_end -> params -> (call close) -> the subclass's ``_ended``

* params: whitespace, then the key tag or the call's closing tag; anything else is
  malformed (skip to the closing tag, the call fails).
* key: the key markup up to ``_KEY_STOP``, at most ``_MAX_KEY`` chars, read whole by
  ``_KEY_RE`` (group ``key``).
* value: raw text, streamed as it arrives (only a suffix that could begin the closing tag
  is held back).
* value_end: a value is often code that writes this very format, so its closing tag counts
  only when what follows it (after whitespace) is another key tag or the call's closing tag;
  otherwise the tag and the whitespace were value text.
* A value is exactly the text between its tags (both templates write it inline, so a
  trailing newline is part of the file being written); the tool's schema types it
  (``_values.convert``): a value is a string unless the schema declares another type, as
  for Qwen3-Coder.

All markup from the tool's name to the call's closing tag goes out as ``ToolCallDelta.text``;
each value, once confirmed, goes out in ``fields`` / ``values``.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TagDecoder
from toolwire.decode.tags._values import convert

PARAMS = "params"
_KEY, _VALUE, _VALUE_END = "key", "value", "value_end"
_MAX_KEY = 512


class KeyValueDecoder(TagDecoder):
    """A text format whose calls are a header naming the tool, then key/value markup."""

    _KEY_OPEN: ClassVar[str]
    """The tag that opens an argument (``<arg_key>``, ``<parameter name=``)."""
    _KEY_STOP: ClassVar[str]
    """Where the key markup ends (``<arg_value>``, ``>``)."""
    _KEY_RE: ClassVar[re.Pattern[str]]
    """The key markup between the two, whole; its ``key`` group is the argument's name."""
    _VALUE_CLOSE: ClassVar[str]
    _CALL_CLOSE: ClassVar[str]

    def __init__(self, schemas: Mapping[str, dict[str, Any]] | None = None) -> None:
        super().__init__()
        self._schemas: Mapping[str, dict[str, Any]] = schemas or {}
        self._name = ""
        self._params: dict[str, Any] = {}
        self._key = ""
        self._value: list[str] = []
        self._ws: list[str] = []
        self._value_tags = TagSet(self._VALUE_CLOSE)
        self._skip_end = TagSet(self._CALL_CLOSE)

    def _kv_table(self) -> dict[str, Callable[[], bool]]:
        return {
            PARAMS: self._on_params,
            _KEY: self._on_key,
            _VALUE: self._on_value,
            _VALUE_END: self._on_value_end,
            SKIP: self._on_skip,
        }

    @abstractmethod
    def _ended(self) -> None:
        """The call ended (normally or not): set the state that reads what follows."""

    def _start_call(self, name: str) -> None:
        self._begin(name, json_args=False)
        self._name, self._params = name, {}
        self._state = PARAMS

    def _on_params(self) -> bool:
        self._delta_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, (self._KEY_OPEN, self._CALL_CLOSE))
        if opt == "":
            return False
        if opt is None:
            self._malformed(f"expected {self._KEY_OPEN} or {self._CALL_CLOSE}")
        elif opt == self._CALL_CLOSE:
            self._pos += len(opt)
            self._end(self._params)
            self._ended()
        else:
            self._delta_to(self._pos + len(opt))
            self._state = _KEY
        return True

    def _on_key(self) -> bool:
        stop = self._KEY_STOP
        window = _MAX_KEY + len(stop)
        end = self._buf.find(stop, self._pos, self._pos + window)
        if end < 0:
            if len(self._buf) - self._pos < window:
                return False  # the key may still end within its limit
            self._malformed("an argument name longer than any")
            return True
        m = self._KEY_RE.fullmatch(self._buf, self._pos, end)
        self._delta_to(end + len(stop))
        if m is None:
            self._malformed("not an argument name")
        else:
            self._key, self._value, self._state = m.group("key"), [], _VALUE
        return True

    def _on_value(self) -> bool:
        start, tag = self._value_tags.scan(self._buf, self._pos)
        if start > self._pos:
            self._value.append(self._buf[self._pos : start])
            self._delta_to(start)
        if tag is None:
            return False
        self._delta_to(start + len(tag))
        self._state, self._ws = _VALUE_END, []
        return True

    def _on_value_end(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._delta_to(end)
        opt = expect(self._buf, self._pos, (self._KEY_OPEN, self._CALL_CLOSE))
        if opt == "":
            return False
        if opt is None:  # the closing tag was text of the value
            self._value.append(self._VALUE_CLOSE + "".join(self._ws))
            self._state = _VALUE
        else:
            self._close_value()
        return True

    def _close_value(self) -> None:
        raw = "".join(self._value)
        props = self._schemas.get(self._name, {}).get("properties")
        schema = props.get(self._key) if isinstance(props, Mapping) else None
        value = self._params[self._key] = convert(raw, schema)
        self._value = []
        self._delta("", (self._key,), (value,))
        self._state = PARAMS

    def _on_skip(self) -> bool:
        start, tag = self._skip_end.scan(self._buf, self._pos)
        self._delta_to(start)
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._ended()
        return True


__all__ = ["PARAMS", "KeyValueDecoder"]

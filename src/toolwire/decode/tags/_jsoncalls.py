"""The frame of the formats that write calls as JSON objects after a marker.

Granite (``<|tool_call|>[{...}, ...]``), Phi-4-mini (``functools[{...}]``), Mistral's
first form (``[TOOL_CALLS][{...}]``) and Llama 3's (``{...}; {...}``) differ only in the
marker and in what separates the objects; each object is Hermes's wrapper,
``{"name": ..., "arguments": {...}}`` (``parameters`` too), walked by ``_wrapper.Wrapper``.

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    text -> list -> obj -> sep -> obj ...
                             \\-> text (after ``]``, or whatever is not a separator)

* list: after the marker, whitespace, then ``[`` (a list of calls) or ``{`` (one call);
  anything else reverts the marker to text.
* obj: the wrapper walks one object. ``ToolCallStart`` goes out on the chunk that closes
  the name (arguments written before the name wait in the wrapper until it comes); the
  arguments stream as ``ToolCallDelta`` text for ``JsonStream``; the call ends at the
  object's ``}``. An object without a special token before it (``_bare``) is a call only
  when its first key is ``name`` and, with the declared tools, the name is one of them:
  anything else reverts to text as soon as it shows.
* Before the name, a broken object reverts to text (with a ``StreamError`` after a special
  token). After it, the call fails, and the rest is text: a JSON list has no closing tag
  to skip to. A ``<`` right after a complete member ends the call (a dropped ``}``).
* sep: whitespace, then ``,`` (in a list) or one of ``_SEPARATORS`` (outside one) and the
  next object; ``]`` ends the list. Anything else is text, with the whitespace before it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from toolwire.decode.tags._holdback import TagSet, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._wrapper import Wrapper

LIST, OBJ, SEP = "list", "obj", "sep"


class JsonCallsDecoder(TagDecoder):
    """Calls as JSON objects after a marker; subclasses give ``_OPEN`` and the hooks."""

    _AFTER_OPEN = LIST
    _SEPARATORS: ClassVar[str] = ""
    """What separates two objects outside a list (Llama 3: ``;``)."""
    _AFTER_OBJ: ClassVar[str] = SEP
    """The state after an object."""
    _SKIP_TO: ClassVar[TagSet | None] = None
    """The tag that closes a call, if the format has one: a broken call skips to it."""

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        """``schemas``: the declared tools by name (their schemas are not needed here)."""
        super().__init__()
        self._tools = frozenset(schemas or ())
        self._wrapper = Wrapper()
        self._in_list = False
        self._value_only = False
        self._bare = False  # no special token before the object
        self._ws: list[str] = []

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {LIST: self._on_list, OBJ: self._on_obj, SEP: self._on_sep, SKIP: self._on_skip}

    def _object(self, *, value_only: bool = False) -> None:
        """The next object begins at the cursor: a wrapper, or (``value_only``) the
        arguments of the call just begun."""
        self._wrapper = Wrapper(value_only=value_only)
        self._value_only = value_only
        self._state = OBJ

    # -- the list ------------------------------------------------------------------------

    def _on_list(self) -> bool:
        at = skip_space(self._buf, self._pos)
        if at == len(self._buf):
            self._head_to(at)
            return False
        c = self._buf[at]
        if c in "[{":
            self._head_to(at + (c == "["))
            self._in_list = c == "["
            self._object()
        else:
            self._head_to(at)
            self._not_a_list()
        return True

    def _not_a_list(self) -> None:
        """The marker is followed by neither ``[`` nor ``{`` (a format may read more)."""
        self._revert("no JSON list of calls after the marker")

    # -- one object ----------------------------------------------------------------------

    def _on_obj(self) -> bool:
        wrapper = self._wrapper
        end = wrapper.run(self._buf, self._pos)
        if self._call is None:
            self._head_to(end)
        self._pos = end
        if self._call is None and not self._may_call(wrapper):
            return True
        self._stream_call(wrapper, bare=self._bare)
        if wrapper.error is not None:
            self._broken(wrapper.error)
        elif wrapper.done or (self._value_only and wrapper.between_members):
            self._whole()
        else:
            return False
        return True

    def _may_call(self, wrapper: Wrapper) -> bool:
        """An object with no special token stays a candidate while it may name a tool."""
        if not self._bare:
            return True
        why = wrapper.not_a_call(self._tools or None)
        if why is not None:
            self._revert(why)
        return why is None

    def _broken(self, error: str) -> None:
        if self._call is None:
            self._revert(error)
        elif self._wrapper.between_members and self._buf.startswith("<", self._pos):
            self._whole()  # a closing tag where the final ``}`` should be
        elif self._SKIP_TO is not None:
            self._malformed(error)
        else:  # nothing to skip to: fail now, the rest is text
            self._fail(f"malformed tool call: {error}")
            self._state, self._in_list = TEXT, False

    def _on_skip(self) -> bool:
        # What follows a break is not argument text: it is dropped, not fed to JsonStream.
        assert self._SKIP_TO is not None
        start, tag = self._SKIP_TO.scan(self._buf, self._pos)
        self._pos = start
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._skipped()
        return True

    def _skipped(self) -> None:
        """A broken call was skipped up to and including ``_SKIP_TO``."""
        self._state = TEXT

    def _whole(self) -> None:
        if self._call is None:
            self._revert("the tool call has no name")
            return
        self._end()
        self._ws, self._state = [], self._AFTER_OBJ

    # -- between objects -----------------------------------------------------------------

    def _on_sep(self) -> bool:
        end = skip_space(self._buf, self._pos)
        self._ws.append(self._buf[self._pos : end])
        self._pos = end
        if end == len(self._buf):
            return False
        c = self._buf[end]
        if self._in_list and c in ",]":
            self._pos, self._ws = end + 1, []
            if c == ",":
                self._object()
            else:
                self._in_list = False
                self._list_closed()
        elif not self._in_list and c in self._SEPARATORS:
            # Held as head: if no object follows, the separator was text after all.
            self._pos, self._head = end + 1, ["".join(self._ws), c]
            self._ws, self._committed = [], False
            self._object()
        else:
            self._emit_text("".join(self._ws))
            self._ws, self._state, self._in_list = [], TEXT, False
        return True

    def _list_closed(self) -> None:
        """``]`` closed the list (a format may expect a closing tag after it)."""
        self._state = TEXT

    # -- the end of the text -------------------------------------------------------------

    def _close_call(self, rest: str) -> None:
        if self._state == OBJ and self._wrapper.between_members and not self._value_only:
            self._end()
        else:
            self._fail(self._error or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        self._emit_text("".join(self._ws) + rest)
        self._ws = []


def dumps(value: Any) -> str:
    """JSON as the chat templates write it (``json.dumps``'s spacing, text kept as is)."""
    return json.dumps(value, ensure_ascii=False)


__all__ = ["LIST", "OBJ", "SEP", "JsonCallsDecoder", "dumps"]

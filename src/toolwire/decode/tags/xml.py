"""XML-tags tool calls (entrhq/forge's format): ``<tool><tool_name>NAME</tool_name><arguments>...``.

Full form: ``<tool><server_name>S</server_name><tool_name>NAME</tool_name>
<arguments><file_path>a.py</file_path><content><![CDATA[...]]></content></arguments></tool>``.

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States, in order::

    text -> head -> [server] -> name -> body -> args <-> tag | cdata | comment
                                          |        -> after -> text
                                          +-> text (``</tool>``: no arguments)

* head: whitespace, then ``<server_name>`` (optional, its value is not used) or
  ``<tool_name>``. Anything else means the ``<tool>`` was prose: it reverts to text. A
  name holds no markup and at most ``_MAX_NAME`` chars.
* ``ToolCallStart`` goes out on the chunk that completes ``</tool_name>``.
* From then on every character up to ``</tool>`` (exclusive) is the call's markup and
  goes out as ``ToolCallDelta.text``; ``_xmlargs.ArgumentTree`` builds the object and says
  which top-level ``fields`` just completed (with their ``values``).
* args: text runs go to the open element; ``<`` starts a tag only when followed by a name
  character or ``/`` (so ``a < b`` in code stays text). A tag is held until its ``>`` and
  goes out whole: the characters of ``</tool>`` never reach a delta.
* cdata: verbatim up to ``]]>``: ``</tool>`` or ``<tool_name>`` inside ends nothing.
* A ``</tool>`` that closes no open ``<tool>`` argument element ends the call: with
  every argument element closed it ends normally (the model skipped ``</arguments>``),
  else it fails right there.
* skip: after malformed markup, up to ``</tool>``, which fails the call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import SPACE, TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._xmlargs import ArgumentTree

_HEAD, _SERVER, _NAME, _BODY = "head", "server", "name", "body"
_ARGS, _TAG, _CDATA, _COMMENT, _AFTER = "args", "tag", "cdata", "comment", "after"

_MAX_NAME = 256  # a tool or server name; longer is prose, not a call
_MAX_TAG = 1024  # one tag with its attributes

_NAME_END = {_SERVER: TagSet("</server_name>", "<"), _NAME: TagSet("</tool_name>", "<")}
_CONTENT = TagSet("<![CDATA[", "<!--", "<")
_CDATA_END = TagSet("]]>")
_COMMENT_END = TagSet("-->")
_CALL_END = TagSet("</tool>")

_TOOL_NAME = re.compile(r"[^\s<>&\"']+")
_NAME_START = re.compile(r"[A-Za-z_/]")
_CLOSE_TAG = re.compile(r"</\s*([A-Za-z_][\w.:-]*)\s*>")
_OPEN_TAG = re.compile(r"<([A-Za-z_][\w.:-]*)(?:\s[^>]*)?/?>", re.S)


class XmlTagsDecoder(TagDecoder):
    """Decode ``<tool>...</tool>`` calls out of a model's text."""

    _OPEN = TagSet("<tool>")
    _AFTER_OPEN = _HEAD

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        """``schemas``: the declared tools' parameters, which type their values."""
        super().__init__()
        self._schemas: Mapping[str, Any] = schemas or {}
        self._name: list[str] = []
        self._name_len = 0
        self._tag: list[str] = []
        self._tag_len = 0
        self._tree = ArgumentTree()

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _HEAD: self._on_head,
            _SERVER: self._on_name,
            _NAME: self._on_name,
            _BODY: self._on_body,
            _ARGS: self._on_args,
            _TAG: self._on_tag,
            _CDATA: self._on_cdata,
            _COMMENT: self._on_comment,
            _AFTER: self._on_after,
            SKIP: self._on_skip,
        }

    # -- head ----------------------------------------------------------------------------

    def _on_head(self) -> bool:
        self._head_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, ("<server_name>", "<tool_name>"))
        if opt == "":
            return False
        if opt is None:
            self._revert("expected <tool_name>")
            return True
        self._head_to(self._pos + len(opt))
        self._committed = True
        self._state = _SERVER if opt == "<server_name>" else _NAME
        self._name, self._name_len = [], 0
        return True

    def _on_name(self) -> bool:
        start, tag = _NAME_END[self._state].scan(self._buf, self._pos)
        limit = self._pos + _MAX_NAME - self._name_len
        if start > limit:  # cut at a fixed length, so any chunking reverts at one place
            self._head_to(limit)
            self._revert("a name longer than any tool name")
            return True
        self._name.append(self._buf[self._pos : start])
        self._name_len += start - self._pos
        self._head_to(start)
        if tag is None:
            return False
        if tag == "<":
            self._revert("markup inside a name")
            return True
        self._head_to(start + len(tag))
        name = "".join(self._name).strip(SPACE)
        if self._state == _SERVER:
            self._state = _HEAD
        elif _TOOL_NAME.fullmatch(name) is None:
            self._revert(f"{name!r} is not a tool name")
        else:
            self._begin(name, json_args=False)
            self._tree = ArgumentTree(self._schemas.get(name))
            self._state = _BODY
        return True

    # -- the call ----------------------------------------------------------------------

    def _on_body(self) -> bool:
        self._delta_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, ("<arguments>", "<arguments/>", "</tool>"))
        if opt == "":
            return False
        if opt is None:
            self._malformed("expected <arguments> or </tool> after the tool name")
        elif opt == "</tool>":
            self._pos += len(opt)
            self._finish({})
        else:
            self._delta_to(self._pos + len(opt))
            self._state = _ARGS if opt == "<arguments>" else _AFTER
        return True

    def _on_args(self) -> bool:
        start, tag = _CONTENT.scan(self._buf, self._pos)
        self._arg_text_to(start, cdata=False)
        if tag is None:
            return False
        if tag != "<":
            self._delta_to(start + len(tag))
            self._state = _CDATA if tag == "<![CDATA[" else _COMMENT
        elif _NAME_START.match(self._buf, start + 1):
            self._tag, self._tag_len = [], 0
            self._state = _TAG
        else:  # ``<`` then a space, digit, ``=``...: code, not a tag (scan held ``<`` alone)
            self._arg_text_to(start + 1, cdata=False)
        return True

    def _arg_text_to(self, end: int, *, cdata: bool) -> None:
        self._tree.text(self._buf[self._pos : end], cdata=cdata)
        self._delta_to(end)

    def _on_tag(self) -> bool:
        close = self._buf.find(">", self._pos)
        limit = self._pos + _MAX_TAG - self._tag_len
        end = len(self._buf) if close < 0 else close + 1
        if end > limit:
            self._tag.append(self._buf[self._pos : limit])
            self._pos = limit
            self._delta("".join(self._tag))
            self._malformed("a tag longer than any argument tag")
            return True
        self._tag.append(self._buf[self._pos : end])
        self._tag_len += end - self._pos
        self._pos = end
        if close < 0:
            return False
        self._complete_tag("".join(self._tag))
        return True

    def _complete_tag(self, tag: str) -> None:
        self._state = _ARGS
        closing = _CLOSE_TAG.fullmatch(tag)
        opening = None if closing else _OPEN_TAG.fullmatch(tag)
        if closing is not None and closing.group(1) == "tool" != self._tree.innermost:
            self._end_at_tool_close()
            return
        try:
            if closing is not None:
                fields = self._tree.close(closing.group(1))
            elif opening is not None:
                fields = self._tree.open(opening.group(1))
                if tag.endswith("/>"):
                    fields += self._tree.close(opening.group(1))
            else:
                raise ValueError(f"{tag!r} is not a tag")
        except ValueError as e:
            self._delta(tag)
            self._malformed(str(e))
            return
        self._delta(tag, fields, self._tree.values(fields))
        if self._tree.done:
            self._state = _AFTER

    def _end_at_tool_close(self) -> None:
        # ``</tool>`` inside the arguments: the model skipped ``</arguments>``. The markup
        # ends here either way; what matters is whether the arguments are whole.
        if self._tree.depth > 1:
            self._fail("malformed tool-call markup: </tool> before its argument elements closed")
            self._state = TEXT
            return
        try:
            fields = self._tree.close("arguments")
        except ValueError as e:
            self._fail(f"malformed tool-call markup: {e}")
            self._state = TEXT
            return
        self._delta("", fields, self._tree.values(fields))
        self._finish(self._tree.value)

    def _on_cdata(self) -> bool:
        start, tag = _CDATA_END.scan(self._buf, self._pos)
        self._arg_text_to(start, cdata=True)
        if tag is None:
            return False
        self._delta_to(start + len(tag))
        self._state = _ARGS
        return True

    def _on_comment(self) -> bool:
        start, tag = _COMMENT_END.scan(self._buf, self._pos)
        self._delta_to(start)
        if tag is None:
            return False
        self._delta_to(start + len(tag))
        self._state = _ARGS
        return True

    def _on_after(self) -> bool:
        self._delta_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, ("</tool>",))
        if opt == "":
            return False
        if opt is None:
            self._malformed("expected </tool> after </arguments>")
            return True
        self._pos += len(opt)
        self._finish(self._tree.value)
        return True

    def _on_skip(self) -> bool:
        start, tag = _CALL_END.scan(self._buf, self._pos)
        self._delta_to(start)
        if tag is None:
            return False
        self._pos += len(tag)
        self._fail(self._error or "malformed tool-call markup")
        self._state = TEXT
        return True

    def _finish(self, arguments: dict[str, Any]) -> None:
        self._end(arguments)
        self._state = TEXT

    def _close_call(self, rest: str) -> None:
        if self._state == _TAG:
            rest = "".join(self._tag) + rest
        if self._state == _AFTER:  # the arguments were complete: only </tool> is missing
            self._delta(rest)
            self._end(self._tree.value)
            return
        super()._close_call(rest)


__all__ = ["XmlTagsDecoder"]

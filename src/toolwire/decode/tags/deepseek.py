"""DeepSeek V3 and V3.1 tool calls, between the models' own special tokens.

V3 (and R1)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
    ```json
    {"city": "Tokyo"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

V3.1 drops the type and the fence:
``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``.
One decoder reads both (the name is what comes before ``<｜tool▁sep｜>`` when a ``{`` follows
it, else the line after it); the two formats differ in how toolwire writes a past call.

Theory of operation (the frame is ``_jsoncalls.JsonCallsDecoder``)
-----------------------------------------------------------------
States::

    text -> block -> head -> (after_sep -> name) -> fence -> obj -> call_end -> block
      \\-> head (a call without the section token, as SGLang reads it)

* block: whitespace, then ``<｜tool▁call▁begin｜>`` (a call) or ``<｜tool▁calls▁end｜>`` (the
  section ends). Anything else reverts a section that holds no call yet to text (with a
  ``StreamError``); after a call it is text.
* head / after_sep / name / fence: the header. V3's call starts at the end of its name's
  line (before the fence); V3.1's at the ``{`` after ``<｜tool▁sep｜>`` (only the ``{`` says
  the word before it was the name, not the type). The object streams as the arguments
  (``Wrapper(value_only=True)``).
* call_end: whitespace, the fence's closing ```` ``` ````, ``<｜tool▁call▁end｜>``. A broken
  object fails its call and skips to ``<｜tool▁call▁end｜>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._jsoncalls import JsonCallsDecoder, dumps
from toolwire.decode.tags._machine import TEXT

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
_BLOCK, _HEAD, _AFTER_SEP, _NAME, _FENCE, _CALL_END = (
    "block", "head", "after_sep", "name", "fence", "call_end"
)  # fmt: skip
_MAX_HEAD = 300
_WORD = re.compile(r"[^\s<>{}`]{1,256}")
_HEAD_END = TagSet(SEP, "\n")
_FENCE_OPEN = re.compile(r"```[A-Za-z0-9_+.-]{0,32}[ \t]*\r?\n")
_FENCE_PART = re.compile(r"`{0,3}[A-Za-z0-9_+.-]{0,32}[ \t]*\r?")


class DeepSeekV3Decoder(JsonCallsDecoder):
    """Decode DeepSeek V3's (and V3.1's) calls out of a model's text."""

    _OPEN = TagSet(CALLS_BEGIN, CALL_BEGIN)
    _AFTER_OPEN = _BLOCK
    _COMMIT_ON_OPEN = True
    _AFTER_OBJ = _CALL_END
    _SKIP_TO = TagSet(CALL_END)

    def __init__(self, schemas: Mapping[str, Any] | None = None) -> None:
        super().__init__(schemas)
        self._word = ""
        self._fence_closed = False

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            **super()._table(),
            _BLOCK: self._on_block,
            _HEAD: self._on_head,
            _AFTER_SEP: self._on_after_sep,
            _NAME: self._on_name,
            _FENCE: self._on_fence,
            _CALL_END: self._on_call_end,
        }

    def _opened(self, tag: str) -> None:
        if tag == CALL_BEGIN:
            self._state = _HEAD

    def _on_block(self) -> bool:
        self._head_to(skip_space(self._buf, self._pos))
        opt = expect(self._buf, self._pos, (CALL_BEGIN, CALLS_END))
        if opt == "":
            return False
        if opt is None:
            self._revert("expected <｜tool▁call▁begin｜>")
        elif opt == CALLS_END:
            self._pos += len(opt)
            self._head, self._committed, self._state = [], False, TEXT
        else:
            self._head_to(self._pos + len(opt))
            self._committed, self._state = True, _HEAD
        return True

    def _on_head(self) -> bool:
        start, tag = _HEAD_END.scan(self._buf, self._pos)
        if tag is None:
            if len(self._buf) - self._pos > _MAX_HEAD:
                self._revert("no <｜tool▁sep｜> after the call's type or name")
                return True
            return False
        word = self._buf[self._pos : start].strip()
        if not _WORD.fullmatch(word):
            self._revert("a bad tool name")
            return True
        self._word = word
        self._head_to(start + len(tag))
        if tag == SEP:
            self._state = _AFTER_SEP
        else:
            self._named()
        return True

    def _on_after_sep(self) -> bool:
        at = skip_space(self._buf, self._pos)
        if at == len(self._buf):
            return False
        if self._buf[at] == "{":  # V3.1: the word was the name
            self._head_to(at)
            self._start_arguments()
        else:  # V3: the word was the type; the name is the rest of the line
            self._state = _NAME
        return True

    def _on_name(self) -> bool:
        end = self._buf.find("\n", self._pos)
        if end < 0:
            if len(self._buf) - self._pos > _MAX_HEAD:
                self._revert("no line end after the tool name")
                return True
            return False
        word = self._buf[self._pos : end].strip()
        if not _WORD.fullmatch(word):
            self._revert("a bad tool name")
            return True
        self._word = word
        self._head_to(end + 1)
        self._named()
        return True

    def _named(self) -> None:
        """V3: the name's line is complete, so the call starts before its fence."""
        self._begin(self._word, json_args=True)
        self._fence_closed = False
        self._state = _FENCE

    def _on_fence(self) -> bool:
        # The call is open: the fence is markup, not argument text, so it is skipped.
        at = skip_space(self._buf, self._pos)
        m = _FENCE_OPEN.match(self._buf, at)
        if m is not None:
            at = skip_space(self._buf, m.end())
        elif _FENCE_PART.match(self._buf, at).end() == len(self._buf):  # type: ignore[union-attr]
            return False
        if at == len(self._buf):
            return False
        self._pos = at
        if self._buf[at] != "{":
            self._malformed("the call's arguments are not a JSON object")
        else:
            self._object(value_only=True)
        return True

    def _start_arguments(self) -> None:
        self._begin(self._word, json_args=True)
        self._fence_closed = False
        self._object(value_only=True)

    def _on_call_end(self) -> bool:
        at = skip_space(self._buf, self._pos)
        options = (CALL_END,) if self._fence_closed else ("```", CALL_END)
        opt = expect(self._buf, at, options)
        if opt == "" or (opt is None and at == len(self._buf)):
            return False
        if opt == "```":
            self._pos, self._fence_closed = at + 3, True
        elif opt == CALL_END:
            self._pos, self._state = at + len(opt), _BLOCK
        else:  # the model left the markup: what follows is text
            self._text_to(at)
            self._state = TEXT
        return True

    def _skipped(self) -> None:
        self._state = _BLOCK


class DeepSeekV31Decoder(DeepSeekV3Decoder):
    """Decode DeepSeek V3.1's calls (V3's are read too)."""


def render(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as the DeepSeek V3 template writes it."""
    body = f"function{SEP}{name}\n```json\n{dumps(dict(arguments))}\n```"
    return f"{CALLS_BEGIN}{CALL_BEGIN}{body}{CALL_END}{CALLS_END}"


def render_v31(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as the DeepSeek V3.1 template writes it."""
    return f"{CALLS_BEGIN}{CALL_BEGIN}{name}{SEP}{dumps(dict(arguments))}{CALL_END}{CALLS_END}"


__all__ = ["DeepSeekV3Decoder", "DeepSeekV31Decoder", "render", "render_v31"]

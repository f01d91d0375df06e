"""gpt-oss (OpenAI harmony) messages in a model's text, as a server that does not parse them
passes them on: reasoning, answers and tool calls, each a message with a header.

A call, as the model writes it::

    <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json
    <|message|>{"city": "Paris"}<|call|>

(one line in reality). The recipient may also sit in the role part
(``<|start|>assistant to=functions.NAME<|channel|>commentary``), and when the prompt already
ended with ``<|start|>assistant`` the text begins right after it (`` to=functions.NAME...``
or ``<|channel|>...``).

Theory of operation (the frame is ``_machine.TagDecoder``)
----------------------------------------------------------
States::

    first -> text -> header -> think (analysis) -> text
                          \\-> text (final, commentary: the body is text)
                          \\-> wrap -> call_end -> text   (to=functions.NAME)

* header: from ``<|start|>`` or ``<|channel|>`` up to ``<|message|>`` (at most
  ``_MAX_HEADER`` chars; ``<|channel|>`` and ``<|constrain|>`` may sit inside, and between
  tokens only words, spaces, ``. : = / -``). The markup is held: if the header breaks
  (another token, another character, too long, the text ends) it reverts to text with a
  ``StreamError``. As soon as a recipient ``to=functions.NAME`` is complete (a space
  or a token follows), the call starts. A recipient without ``functions.`` is a call only
  when it names a declared tool; one to a built-in tool (``browser.search``, ``python``)
  reverts to text: toolwire's client has no such tool.
* The body of a call is its JSON arguments (``_wrapper.Wrapper(value_only=True)``;
  ``ToolCalls`` parses them and reports completed ``fields``); the call ends at the object's
  end, whatever marker follows (``<|call|>``, ``<|end|>``, or none: servers strip the stop
  token). Arguments that break fail the call at its end marker.
* The body of an ``analysis`` message is reasoning: it goes out as ``ThinkingDelta``. Any
  other body (``final``, ``commentary`` to the user) is text; its header and end token
  (``<|end|>``, ``<|return|>``) are markup and are dropped. End tokens outside a message are
  text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolwire.decode.tags._holdback import TagSet, expect, skip_space
from toolwire.decode.tags._machine import SKIP, TEXT, TagDecoder
from toolwire.decode.tags._wrapper import Wrapper
from toolwire.events import ThinkingDelta

_FIRST, _HEADER, _THINK, _WRAP, _CALL_END = "first", "header", "think", "wrap", "call_end"
_START, _CHANNEL, _CONSTRAIN, _MESSAGE = "<|start|>", "<|channel|>", "<|constrain|>", "<|message|>"
_END, _CALL, _RETURN = "<|end|>", "<|call|>", "<|return|>"
_ENDS = (_CALL, _END, _RETURN)
_TOKENS = TagSet(_START, _CHANNEL, _CONSTRAIN, _MESSAGE, *_ENDS)
_THINK_STOP = TagSet(_START, _CHANNEL, *_ENDS)
_SKIP_END = TagSet(_START, *_ENDS)
_MAX_HEADER = 512
_RECIPIENT = re.compile(r"(?:^|\s)to=([^\s<]{1,256})(?=[\s<])")
_CHANNEL_NAME = re.compile(r"<\|channel\|>[ \t]*(\w+)")
# What a header holds between its tokens: a role, a channel, ``to=RECIPIENT``, ``json``.
_NOT_HEADER = re.compile(r"[^\w .:=/\t\r\n-]")
_LEAD = "to="  # a text that begins inside the role part of a header


class HarmonyDecoder(TagDecoder):
    """Decode gpt-oss harmony messages out of a model's text (see the module doc).

    ``schemas``: the declared tools (name -> parameters schema); a recipient written without
    ``functions.`` counts when it names one of them.
    """

    _OPEN = TagSet(_START, _CHANNEL, *_ENDS)
    _AFTER_OPEN = _HEADER
    _COMMIT_ON_OPEN = True

    def __init__(self, schemas: Mapping[str, dict[str, Any]] | None = None) -> None:
        super().__init__()
        self._tools = frozenset(schemas or ())
        self._hdr: list[str] = []
        self._hdr_len = 0
        self._in_message = False  # a text body is open: its end token is markup
        self._wrapper = Wrapper(value_only=True)
        self._state = _FIRST

    def _table(self) -> dict[str, Callable[[], bool]]:
        return {
            _FIRST: self._on_first,
            _HEADER: self._on_header,
            _THINK: self._on_think,
            _WRAP: self._on_wrap,
            _CALL_END: self._on_call_end,
            SKIP: self._on_skip,
        }

    def _on_first(self) -> bool:
        at = self._pos
        while at < len(self._buf) and at - self._pos < 8 and self._buf[at] in " \t":
            at += 1
        opt = expect(self._buf, at, (_LEAD,))
        if opt == "" and at - self._pos < 8:
            return False
        self._state = TEXT
        if opt:
            self._head, self._committed = [], False
            self._start_header()
        return True

    def _opened(self, tag: str) -> None:
        if tag in (_START, _CHANNEL):
            self._head = []
            self._pos -= len(tag)  # the header reads its first token
            self._start_header()
            return
        self._committed = False
        if self._in_message:  # the end of a text body: markup
            self._head, self._state, self._in_message = [], TEXT, False
        else:
            self._revert("an end token outside a message")

    # -- the header ----------------------------------------------------------------------

    def _start_header(self) -> None:
        self._hdr, self._hdr_len, self._in_message = [], 0, False
        self._state = _HEADER

    def _header_to(self, end: int) -> None:
        self._hdr.append(self._buf[self._pos : end])
        self._hdr_len += end - self._pos
        if self._call is None:
            self._head_to(end)
        else:  # the call has started: the rest of its header is not argument text
            self._pos = end

    def _on_header(self) -> bool:
        start, tag = _TOKENS.scan(self._buf, self._pos)
        # Whichever comes first breaks the header, so that any chunking breaks it there.
        limit = self._pos + _MAX_HEADER - self._hdr_len
        odd = _NOT_HEADER.search(self._buf, self._pos, min(start, limit))
        if odd is not None:  # prose that named a token: shown without waiting for more
            self._break_at(odd.start(), "not a message header")
            return True
        if start > limit:
            self._break_at(limit, "a message header longer than any")
            return True
        first = tag == _START and not self._hdr and start == self._pos
        if tag is not None and tag not in (_CHANNEL, _CONSTRAIN, _MESSAGE) and not first:
            self._break_at(start, f"{tag} inside a message header")
            return True
        self._header_to(start if tag is None else start + len(tag))
        if self._call is None:
            self._recipient()  # before the token counts: a revert may end before it
        self._committed = self._committed or (tag is not None and self._state == _HEADER)
        if self._state == _HEADER and tag == _MESSAGE:
            self._body()
        return tag is not None or self._state != _HEADER

    def _break_at(self, end: int, why: str) -> None:
        """The header breaks at ``end`` (the token there is read again as text). A recipient
        complete before it counts first, as it would have in any chunking."""
        self._header_to(end)
        if self._call is None:
            self._recipient()
        if self._state == _HEADER:
            self._broken(why)

    def _recipient(self) -> None:
        header = "".join(self._hdr)
        m = _RECIPIENT.search(header)
        if m is None:
            return
        name = m.group(1)
        if name.startswith("functions.") and len(name) > len("functions."):
            self._begin(name[len("functions.") :], json_args=True)
        elif name in self._tools:
            self._begin(name, json_args=True)
        else:
            # Revert right after the recipient, whatever the chunk held past it: the text
            # after it is read again (the header so far is all in ``_head``, and what
            # follows the recipient came in with this chunk).
            extra = len(header) - m.end()
            if extra:
                self._pos -= extra
                self._head = [header[: m.end()]]
            self._revert(f"a message to {name}, not to a declared function")

    def _body(self) -> None:
        if self._call is not None:
            self._wrapper, self._state = Wrapper(value_only=True), _WRAP
            return
        channel = _CHANNEL_NAME.search("".join(self._hdr))
        self._head, self._committed = [], False
        if channel is not None and channel.group(1) == "analysis":
            self._state = _THINK
        else:
            self._state, self._in_message = TEXT, True

    def _broken(self, why: str) -> None:
        if self._call is None:
            self._revert(why)
        else:
            self._fail(f"malformed tool-call markup: {why}")
            self._state = TEXT

    # -- bodies --------------------------------------------------------------------------

    def _on_think(self) -> bool:
        start, tag = _THINK_STOP.scan(self._buf, self._pos)
        if start > self._pos:
            self._out.append(ThinkingDelta(self._buf[self._pos : start]))
            self._pos = start
        if tag is None:
            return False
        if tag in _ENDS:
            self._pos += len(tag)
        self._state = TEXT  # a header without the end token before it is read there
        return True

    def _on_wrap(self) -> bool:
        return self._json_arguments(self._wrapper, _CALL_END)

    def _on_call_end(self) -> bool:
        at = skip_space(self._buf, self._pos)
        opt = expect(self._buf, at, _ENDS)
        if opt == "":
            return False
        if opt:
            self._pos = at + len(opt)
        self._end()
        self._state = TEXT
        return True

    def _on_skip(self) -> bool:
        start, tag = _SKIP_END.scan(self._buf, self._pos)
        self._pos = start  # what follows a break is not argument text
        if tag is None:
            return False
        if tag != _START:
            self._pos += len(tag)
        self._fail(self._error or "malformed tool call")
        self._state = TEXT
        return True

    # -- the end of the text -------------------------------------------------------------

    def _close_call(self, rest: str) -> None:
        if self._state in (_WRAP, _CALL_END) and self._wrapper.between_members:
            self._end()  # the arguments were whole: servers strip the stop token
        else:
            self._fail(self._error or "the text ended before the tool call was complete")

    def _close_text(self, rest: str) -> None:
        if self._state == _THINK:
            if rest:
                self._out.append(ThinkingDelta(rest))
        else:
            self._emit_text(rest)


__all__ = ["HarmonyDecoder"]

"""One stream of text (the answer or the reasoning) watched for a leaked tool call.

Theory of operation
-------------------
Each candidate format runs its own decoder (a *lane*) over the same text. Before any lane
has a call, a lane's text output is exactly a prefix of its input, so each lane's progress
is an offset (``done``): the text before it is surely not that format's markup. What every
lane has passed (the smallest ``done``) goes to the user, from the original text; the rest
is held, at most a possible tag or a call header being read.

A lane's ``ToolCallStart`` makes it *pending* at the offset where its markup began
(``mark``): its events are kept, not sent. The call is taken (the lane *wins*) when its
arguments begin as structure (a ``{`` or a ``<``) or it ends well. It is dropped when the
name is not a declared tool, when the arguments begin as anything else, or when it ends
broken first: the lane restarts one character after ``mark`` (so that markup cannot open a
call again) and reads the text from there afresh; the markup stays text.

A candidate must keep this contract: before its first call, its text is its input,
character for character. One whose text stops matching is retired for the stream (its
calls are not looked for; the text is shown as it came).

Code the model shows (``_markdown``) reaches the lanes blanked, so no markup inside it can
open a call; while a lane is pending nothing is blanked (a call's arguments may hold
backticks). After a win the winner alone reads the rest of the stream, unblanked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.decode import TextDecoder
from toolwire.decode._markdown import Markdown, mask
from toolwire.events import Event, TextDelta, ToolCallDelta, ToolCallEnd, ToolCallStart

_KEEP = 4096  # text kept after it went out, so the buffers are cut now and then, not always

Factory = Callable[[Mapping[str, Any]], TextDecoder]
"""Builds a text decoder for the declared tools (name -> parameters schema)."""


@dataclass(slots=True)
class Lane:
    """One candidate format's decoder over the watched text, from offset ``base``."""

    name: str
    make: Factory
    decoder: TextDecoder
    done: int
    """Offset up to which this lane has passed the text as text."""
    mark: int = -1
    """Where the pending call's markup began (-1: none pending)."""
    pending: list[Event] = field(default_factory=list)
    retired: bool = False
    """Its text stopped matching its input (a decoder that rewrites text): ignored."""
    args: str = ""  # the pending call's argument text so far, up to its first mark


@dataclass(slots=True)
class Win:
    """A lane whose call was taken: its kept events and the text before its markup."""

    lane: Lane
    text_end: int
    events: list[Event]


class Watch:
    """Text in, text out, with calls of declared tools in any candidate format lifted out."""

    def __init__(self, candidates: Sequence[tuple[str, Factory]], tools: Mapping[str, Any]) -> None:
        self._tools = tools
        # The text from offset ``_origin`` on (what went out long ago is dropped: nothing
        # before ``_sent`` is ever read again), and what the lanes were fed of it.
        self._raw = ""
        self._fed = ""  # ``_raw`` with shown code blanked
        self._origin = 0
        self._sent = 0  # the text before this offset went out
        self._md = Markdown()
        self._lanes = [Lane(n, f, f(tools), 0) for n, f in candidates]
        self.winner: Lane | None = None

    def feed(self, text: str) -> tuple[list[Event], Win | None]:
        """Text events for what is now sure to be text; a ``Win`` when a call was taken."""
        if self.winner is not None:
            return self.winner.decoder.feed(text), None
        return self._pieces(self._md.split(text))

    def close(self) -> tuple[list[Event], Win | None]:
        if self.winner is not None:
            return self.winner.decoder.close(), None
        out, win = self._pieces(self._md.flush())
        if win is not None:
            return out + win.events + win.lane.decoder.close(), win
        for lane in self._lanes:
            win = None if lane.retired else self._close_lane(lane)
            if win is not None:
                out += self._text(win.text_end)
                return out + win.events, win
        return out + self._text(self._origin + len(self._raw)), None

    def _close_lane(self, lane: Lane) -> Win | None:
        while True:
            decoder = lane.decoder
            win = self._absorb(lane, decoder.close())
            if win is not None or lane.decoder is decoder:
                return win
            # It dropped a call and restarted after it: the fresh decoder ends here too.

    def _pieces(self, pieces: list[tuple[str, bool]]) -> tuple[list[Event], Win | None]:
        out: list[Event] = []
        for at, (text, inert) in enumerate(pieces):
            pending = any(lane.mark >= 0 for lane in self._lanes)
            if pending and inert:
                self._md.reset()
            fed = mask(text) if inert and not pending else text
            self._raw += text
            self._fed += fed
            for lane in self._lanes:
                win = None if lane.retired else self._absorb(lane, lane.decoder.feed(fed))
                if win is not None:
                    return out + self._won(win, pieces[at + 1 :]), win
            out += self._text(self._passed())
        return out, None

    def _passed(self) -> int:
        """The offset every lane has passed as text: what may go to the user."""
        held = [self._held(lane) for lane in self._lanes if not lane.retired]
        return min(held) if held else self._origin + len(self._raw)

    def _won(self, win: Win, rest: list[tuple[str, bool]]) -> list[Event]:
        self.winner = win.lane
        out = self._text(win.text_end) + win.events
        tail = "".join(text for text, _ in rest)
        if tail:
            out += win.lane.decoder.feed(tail)
        return out

    @staticmethod
    def _held(lane: Lane) -> int:
        return lane.mark if lane.mark >= 0 else lane.done

    def _text(self, end: int) -> list[Event]:
        if end <= self._sent:
            return []
        text = self._raw[self._sent - self._origin : end - self._origin]
        self._sent = end
        if end - self._origin > _KEEP:
            cut = end - self._origin
            self._raw, self._fed, self._origin = self._raw[cut:], self._fed[cut:], end
        return [TextDelta(text)]

    def _absorb(self, lane: Lane, events: list[Event]) -> Win | None:
        """Follow one lane's events; a ``Win`` as soon as its pending call is taken."""
        for i, event in enumerate(events):
            if lane.mark < 0:
                if isinstance(event, TextDelta):
                    start = lane.done - self._origin
                    if self._fed[start : start + len(event.text)] != event.text:
                        lane.retired = True  # its offsets would lie: it cannot be followed
                        return None
                    lane.done += len(event.text)
                elif isinstance(event, ToolCallStart):
                    if event.name not in self._tools:
                        return self._restart(lane, lane.done)
                    lane.mark, lane.pending, lane.args = lane.done, [event], ""
                continue
            lane.pending.append(event)
            verdict = _verdict(lane, event)
            if verdict is True:
                return Win(lane, lane.mark, lane.pending + list(events[i + 1 :]))
            if verdict is False:
                return self._restart(lane, lane.mark)
        return None

    def _restart(self, lane: Lane, mark: int) -> Win | None:
        """Drop the lane's call: its markup is text; read on from just after it began."""
        lane.decoder = lane.make(self._tools)
        lane.done, lane.mark, lane.pending = mark + 1, -1, []
        return self._absorb(lane, lane.decoder.feed(self._fed[mark + 1 - self._origin :]))


def _verdict(lane: Lane, event: Event) -> bool | None:
    """Whether the pending call is a call (True), is not (False), or cannot tell yet."""
    if isinstance(event, ToolCallEnd):
        return event.ok
    if isinstance(event, ToolCallDelta):
        lane.args += event.text
        head = lane.args.lstrip()
        if head:
            return head[0] in "{<"
    return None


__all__ = ["Factory", "Lane", "Watch", "Win"]

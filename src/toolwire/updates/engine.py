"""The update engine: desired tool-call states in, minimal ``session/update``s out.

Theory of operation. The engine is sans-IO: every method takes the time (``now``, or
the injected ``clock``) and returns the notifications to write, in order; the caller
writes them and calls ``poll()`` at ``next_deadline()``. Per tool call it keeps what
the client holds (``CallRecord``) and a *source* of the desired state (a
``ToolCallLifecycle``, or a plain ``ToolCallState``), read only when an update is built,
so a running tool's output is rendered once per frame, not once per piece.

Rules (docs/design.md, "Tool-call lifecycle and ACP mapping" and "ACP rules that bite"):

* only fields whose *value* changed are sent (``diff.changed_fields``), plus what the
  client profile repeats (``profiles``);
* changes to one call are coalesced, latest value per field, and sent at most once per
  ``interval`` (first change at once, later ones at the end of the interval); a status
  change (and so the end) and a refinement of what the card says the call is (title,
  kind, locations: "Write src/a.py" once ``file_path`` is complete) go out at once,
  carrying every pending field of the call;
* positional messages (text and thought chunks, a new ``tool_call``, a plan) first flush
  every held update, so the wire order is the order things happened and a sequential
  renderer never sees a card's older frame after later text;
* ``update(a, b, ...)`` handles several calls in one pass; ``flush()`` (end of turn,
  cancel, error) sends everything held, so no update is lost;
* validation happens before anything is written (``builder``): a bug raises
  ``LifecycleError`` and emits nothing.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolwire.errors import LifecycleError
from toolwire.updates.builders import plan_update
from toolwire.updates.diff import changed_fields
from toolwire.updates.metrics import SessionCounters, SessionMetrics
from toolwire.updates.profiles import DEFAULT_PROFILE, Profile, check_profile
from toolwire.updates.render import CallRecord, Envelope, UpdateBuilder, fields_for, render
from toolwire.updates.text import MessageText
from toolwire.updates.wire import TERMINAL, Notification, ToolCallState

DEFAULT_INTERVAL = 0.05  # seconds: 20 frames/s is smooth and far below any client's limit


class CallSource(Protocol):
    """Where the engine reads a call's desired state (``ToolCallLifecycle`` or a state).

    A source may also define ``sent(nbytes)``: the engine then reports the size of each
    notification it emits for the call (the lifecycle bounds its output frames by it).
    A source that defines ``title``, ``kind`` and ``locations`` (both of toolwire's do)
    lets the engine see a refinement of them without a ``snapshot()``.
    """

    @property
    def tool_call_id(self) -> str: ...

    @property
    def status(self) -> str: ...

    def snapshot(self) -> ToolCallState: ...


@dataclass(slots=True)
class _Slot:
    record: CallRecord
    source: CallSource
    last_emit: float
    due: float | None = None


class UpdateEngine:
    """Turns tool-call state changes and message text into ACP notifications."""

    def __init__(
        self,
        session_id: str,
        *,
        profile: Profile = DEFAULT_PROFILE,
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        message_ids: Callable[[], str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.profile: Profile = check_profile(profile)
        self.interval = interval
        self._clock = clock
        self._envelope = Envelope(session_id)
        self._counters = SessionCounters()
        self._slots: dict[str, _Slot] = {}
        self._held: dict[str, _Slot] = {}
        self._next_due = math.inf
        new_id = message_ids or _counter_ids(session_id)
        total = self._counters.total
        self._text = MessageText("agent_message_chunk", self._envelope, new_id, total)
        self._thought = MessageText("agent_thought_chunk", self._envelope, new_id, total)

    # -- tool calls ---------------------------------------------------------------

    def start(self, source: CallSource, now: float | None = None) -> list[Notification]:
        """The ``tool_call`` for a new call (after everything held: it is positional)."""
        now = self._now(now)
        call_id = source.tool_call_id
        if call_id in self._slots:
            # claude-agent-acp#122: a second tool_call for one id duplicates the card.
            raise LifecycleError(f"tool call {call_id}: tool_call already sent")
        out = self._flush_held(now)
        state = source.snapshot()
        record = CallRecord(state, self._counters.call(call_id))
        names = fields_for("tool_call", self.profile, state, ())
        note = render(self._envelope, record, "tool_call", state, names)
        out.append(note)
        _tell(source, note)
        record.ended = state.status in TERMINAL
        record.counters.changed()
        self._slots[call_id] = _Slot(record, source, now)
        return out

    def update(self, *sources: CallSource, now: float | None = None) -> list[Notification]:
        """Sources whose desired state changed: emit now, or hold until the interval ends."""
        now = self._now(now)
        slots = [self._open_slot(source.tool_call_id) for source in sources]  # validate first
        out = self._due(now)
        for slot, source in zip(slots, sources, strict=True):
            slot.source = source
            slot.record.counters.changed()
            if slot.record.ended:
                continue  # a due frame just read this source and carried its end
            if _urgent(source, slot.record.sent) or now - slot.last_emit >= self.interval:
                self._emit(slot, now, out)
            elif slot.due is None:
                slot.due = slot.last_emit + self.interval
                self._held[source.tool_call_id] = slot
                self._next_due = min(self._next_due, slot.due)
        return out

    def poll(self, now: float | None = None) -> list[Notification]:
        """Held updates whose interval has ended."""
        return self._due(self._now(now))

    def flush(self, now: float | None = None) -> list[Notification]:
        """Everything held, now (end of turn, cancel, error)."""
        return self._flush_held(self._now(now))

    def next_deadline(self) -> float | None:
        """When ``poll`` next has something to send, or ``None``."""
        # _next_due is only a lower bound (an urgent update may have emitted the
        # earliest held call): the exact answer is cheap, there are few held calls.
        return min((s.due for s in self._held.values() if s.due is not None), default=None)

    def permission(
        self, call_id: str, now: float | None = None
    ) -> tuple[list[Notification], dict[str, Any]]:
        """Before ``session/request_permission``: flush the call, and its ``toolCall``.

        Every profile names the call (``title``, ``kind``, ``locations``, ``rawInput``):
        a client's policy matches on kind and title, and one that sees an anonymous
        request may deny what it should allow, or allow what it should refuse (acpx
        permission rules). ``minimal`` and ``verbose`` carry no ``content``: it would
        replace what the editor shows, such as the diff being approved (codex-acp#171);
        ``full`` repeats every field the client already holds (so nothing changes,
        the diff included).
        """
        now = self._now(now)
        slot = self._open_slot(call_id)
        out = self._due(now)
        if slot.due is not None:
            self._emit(slot, now, out)
        sent = slot.record.sent
        payload: dict[str, Any] = {
            "toolCallId": call_id,
            "title": sent.title,
            "kind": sent.kind,
            "locations": list(sent.locations),
        }
        if sent.raw_input is not None:
            payload["rawInput"] = sent.raw_input
        if self.profile == "full":
            payload |= {"status": sent.status, "content": list(sent.content)}
            if sent.raw_output is not None:
                payload["rawOutput"] = sent.raw_output
        return out, payload

    def client_state(self, call_id: str) -> ToolCallState:
        """What the client holds for a call, after every notification returned so far."""
        return self._slots[call_id].record.sent

    # -- message text -------------------------------------------------------------

    def text(self, text: str, *, now: float | None = None) -> list[Notification]:
        """An agent message delta."""
        return self._chunk(self._text.chunk(text), now)

    def thought(self, text: str, *, now: float | None = None) -> list[Notification]:
        """An agent thought delta."""
        return self._chunk(self._thought.chunk(text), now)

    def end_message(self) -> None:
        """The assistant message is over: the next chunks get a new ``messageId``."""
        self._text.end()
        self._thought.end()

    def plan(
        self, entries: Sequence[Mapping[str, Any]], now: float | None = None
    ) -> list[Notification]:
        """A ``plan`` update (the full list of entries; ACP replaces the plan whole)."""
        out = self._flush_held(self._now(now))
        items = [dict(e) for e in entries]
        note = self._envelope.notify(plan_update(items))
        self._counters.total.sent(len(note.line), len(note.line))
        out.append(note)
        return out

    def metrics(self) -> SessionMetrics:
        """Counters for the session and per tool call."""
        return self._counters.snapshot()

    # -- internals ----------------------------------------------------------------

    def _now(self, now: float | None) -> float:
        return self._clock() if now is None else now

    def _open_slot(self, call_id: str) -> _Slot:
        slot = self._slots.get(call_id)
        if slot is None:
            # Zed shows an update for an id it never saw as "Tool call not found".
            raise LifecycleError(f"tool call {call_id}: update before its tool_call")
        if slot.record.ended:
            raise LifecycleError(f"tool call {call_id}: update after its end")
        return slot

    def _chunk(self, note: Notification | None, now: float | None) -> list[Notification]:
        out = self._flush_held(self._now(now))
        if note is not None:
            out.append(note)
        return out

    def _emit(self, slot: _Slot, now: float, out: list[Notification]) -> None:
        if slot.due is not None:
            slot.due = None
            del self._held[slot.record.tool_call_id]
        state = slot.source.snapshot()
        started = time.perf_counter_ns()
        names = changed_fields(slot.record.sent, state)
        slot.record.counters.detected(time.perf_counter_ns() - started)
        if names:
            builder = UpdateBuilder(slot.record, self._envelope, self.profile)
            note = builder.from_state(state, names).build()
            out.append(note)
            slot.last_emit = now
            _tell(slot.source, note)

    def _due(self, now: float) -> list[Notification]:
        out: list[Notification] = []
        if now < self._next_due:
            return out
        for slot in [s for s in self._held.values() if s.due is not None and s.due <= now]:
            self._emit(slot, now, out)
        self._next_due = min(
            (s.due for s in self._held.values() if s.due is not None), default=math.inf
        )
        return out

    def _flush_held(self, now: float) -> list[Notification]:
        out: list[Notification] = []
        for slot in list(self._held.values()):
            self._emit(slot, now, out)
        self._next_due = math.inf
        return out


def _urgent(source: CallSource, sent: ToolCallState) -> bool:
    """A change that goes out at once: the status, or what the card says the call is.

    A refined title is what the user reads while a Write's content streams (seconds for
    a large file); held for the interval, it would go out merged with ``rawInput`` when
    the whole stream arrived in one read, i.e. only once the content is final
    (claude-agent-acp#867: generic titles until the input finished). Refinements are
    few per call (one per argument field a title depends on), so throttling loses
    nothing by letting them through.
    """
    if source.status != sent.status:
        return True
    card: Any = source if hasattr(source, "locations") else source.snapshot()
    return (card.title, card.kind, card.locations) != (sent.title, sent.kind, sent.locations)


def _tell(source: CallSource, note: Notification) -> None:
    """Tell a source that wants it (``sent(nbytes)``) the size of what was sent for it."""
    sent = getattr(source, "sent", None)
    if sent is not None:
        sent(len(note.line))


def _counter_ids(session_id: str) -> Callable[[], str]:
    """Message ids ``<session>-m1``, ``-m2``...: unique per session, deterministic."""
    counter = itertools.count(1)
    return lambda: f"{session_id}-m{next(counter)}"


__all__ = ["DEFAULT_INTERVAL", "CallSource", "UpdateEngine"]

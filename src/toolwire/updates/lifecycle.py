"""The tool-call lifecycle: one state machine per call, start -> streaming -> running -> end.

Theory of operation. A ``ToolCallLifecycle`` is fed what happens to one call: argument
fragments (``ToolCallDelta``), the final arguments (``ToolCallEnd``), then, when the
agent executes it, ``run``, ``output``/``set_content``, and one of ``complete``, ``fail``
or ``cancel``. It keeps the *desired* ACP state of the call (``snapshot()``); the update
engine (``toolwire.updates.engine``) decides what of it to send and when.

Invariants (docs/design.md, "Tool-call lifecycle and ACP mapping"):

* exactly one start (construction) and exactly one end; stages never go back. Every move
  is looked up in ``TRANSITIONS``, keyed by (stage, arguments partial/final, action); a
  move not in the table is a bug in toolwire and raises ``LifecycleError``;
* start and streaming are ACP ``pending``; running is ``in_progress``; the end is
  ``completed`` or ``failed`` (v1 has no ``cancelled``: a cancelled call ends ``failed``
  with a ``rawOutput`` saying so);
* title, kind and locations are refined as soon as the argument fields they depend on
  are complete (``ToolCallDelta.fields``/``values``), not when the arguments end;
* ``rawInput`` is set once, when the arguments are final: re-sending a growing input on
  every delta is quadratic;
* arguments that failed to parse, or were cut, end the call ``failed`` with the error;
* a running tool's output is kept bounded (``OutputWindow``) and rendered only when a
  snapshot is taken, i.e. once per frame the engine sends, not once per piece.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias

from toolwire.errors import LifecycleError
from toolwire.events import ToolCallDelta, ToolCallEnd
from toolwire.updates.output import DEFAULT_RESULT_BYTES, DEFAULT_TAIL_BYTES, OutputWindow, cap_text
from toolwire.updates.titles import Describer, describe
from toolwire.updates.wire import (
    JsonObject,
    ToolCallState,
    ToolCallStatus,
    ToolKind,
    text_content,
)

Stage: TypeAlias = Literal["start", "streaming", "running", "end"]
Arguments: TypeAlias = Literal["partial", "final"]
Action: TypeAlias = Literal[
    "delta", "input", "content", "run", "output", "complete", "fail", "cancel"
]

_OPEN: Final[tuple[tuple[Stage, Arguments], ...]] = (
    ("start", "partial"),
    ("streaming", "partial"),
    ("streaming", "final"),
    ("running", "final"),
)

#: (stage, arguments, action) -> next stage. Anything missing is illegal.
TRANSITIONS: Final[Mapping[tuple[Stage, Arguments, Action], Stage]] = {
    ("start", "partial", "delta"): "streaming",
    ("start", "partial", "input"): "streaming",  # arguments arrived whole (Gemini)
    ("streaming", "partial", "delta"): "streaming",
    ("streaming", "partial", "input"): "streaming",
    ("streaming", "final", "content"): "streaming",  # e.g. a diff shown for approval
    ("streaming", "final", "run"): "running",
    ("running", "final", "content"): "running",
    ("running", "final", "output"): "running",
    ("running", "final", "complete"): "end",
    **{(stage, args, act): "end" for stage, args in _OPEN for act in ("fail", "cancel")},
}

FRAME_RATIO: Final = 2
FRAME_ALLOWANCE: Final = 512 * 1024
FRAME_OVERHEAD: Final = 160  # at least the JSON-RPC envelope and keys around a frame

CANCELLED_OUTPUT: Final[Mapping[str, Any]] = {"cancelled": True, "message": "Cancelled by the user"}


class ToolCallLifecycle:
    """One tool call's stage machine and desired ACP state (a source for the engine)."""

    __slots__ = (
        "_args",
        "_cwd",
        "_extra",
        "_frame_bytes",
        "_known",
        "_output",
        "_stage",
        "_state",
        "_tail_dirty",
        "name",
    )

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        *,
        cwd: str,
        tail_bytes: int = DEFAULT_TAIL_BYTES,
        result_bytes: int = DEFAULT_RESULT_BYTES,
        describers: Mapping[str, Describer] | None = None,
    ) -> None:
        self.name = name
        self._cwd = cwd
        self._extra = describers
        self._stage: Stage = "start"
        self._args: Arguments = "partial"
        self._known: dict[str, Any] = {}
        self._output = OutputWindow(tail_bytes, result_bytes)
        self._tail_dirty = False
        self._frame_bytes = 0
        found = describe(name, {}, cwd, describers)
        self._state = ToolCallState(
            tool_call_id, found.title, found.kind, "pending", (), found.locations
        )

    # -- what the engine reads -------------------------------------------------------

    @property
    def tool_call_id(self) -> str:
        """The ACP ``toolCallId`` (the provider's call id)."""
        return self._state.tool_call_id

    @property
    def status(self) -> ToolCallStatus:
        """The desired ACP status (cheap: no rendering)."""
        return self._state.status

    @property
    def title(self) -> str:
        """The desired title (cheap: the engine sends a refinement at once)."""
        return self._state.title

    @property
    def kind(self) -> ToolKind:
        """The desired ACP kind."""
        return self._state.kind

    @property
    def locations(self) -> tuple[JsonObject, ...]:
        """The desired locations."""
        return self._state.locations

    @property
    def stage(self) -> Stage:
        """The lifecycle stage."""
        return self._stage

    @property
    def arguments(self) -> Mapping[str, Any]:
        """Top-level argument fields complete so far (all of them once final)."""
        return self._known

    def snapshot(self) -> ToolCallState:
        """The desired state now; a running tool's output tail is rendered here, lazily."""
        if self._tail_dirty:
            self._render_tail()
        return self._state

    def sent(self, nbytes: int) -> None:
        """The engine sent ``nbytes`` for this call (feeds the frame budget)."""
        if self._stage == "running":
            self._frame_bytes += nbytes

    def _render_tail(self) -> None:
        # A frame re-sends the whole tail (v1 content replaces), so frames are bounded by
        # bytes too: what was sent while running stays under FRAME_RATIO x the output so
        # far plus FRAME_ALLOWANCE (checked before each frame, with the engine's exact
        # counts of the frames before it). Output trickling in slowly would otherwise cost
        # a 2 KiB frame per few new bytes, and the bound in BENCHMARKS.md (3x N for N >= 1 MB)
        # would hold only for fast producers.
        text = self._output.running_text()
        budget = FRAME_RATIO * self._output.total + FRAME_ALLOWANCE - self._frame_bytes
        if len(text) + FRAME_OVERHEAD > budget:  # a lower bound of the frame's size
            return
        self._tail_dirty = False
        self._state = self._state.replace(content=(text_content(text),))

    # -- arguments -------------------------------------------------------------------

    def delta(self, event: ToolCallDelta) -> bool:
        """An argument fragment; True if the desired state changed (a field completed)."""
        self._advance("delta")
        if not event.fields:
            return False
        self._known.update(zip(event.fields, event.values, strict=False))
        return self._describe()

    def end_arguments(self, event: ToolCallEnd) -> bool:
        """Arguments final: ``rawInput`` once; or, if they failed to parse, the end."""
        if not event.ok:
            partial = dict(self._known) or None
            error = event.error or "invalid arguments"
            return self._finish(
                "fail",
                "failed",
                (text_content(f"Invalid tool arguments: {error}"),),
                raw_input=partial,
                raw_output={"error": error},
            )
        self._advance("input")
        args = {} if event.arguments is None or event.arguments == "" else event.arguments
        if isinstance(args, Mapping):
            self._known = dict(args)
        self._describe()
        self._state = self._state.replace(raw_input=args)
        return True

    # -- execution -------------------------------------------------------------------

    def run(self) -> bool:
        """The tool starts executing: ``in_progress``."""
        self._advance("run")
        self._state = self._state.replace(status="in_progress")
        return True

    def set_content(self, items: Iterable[JsonObject]) -> bool:
        """Replace the content shown (a diff for approval, a progress line...)."""
        self._advance("content")
        self._tail_dirty = False
        self._state = self._state.replace(content=tuple(items))
        return True

    def output(self, data: str | bytes) -> bool:
        """A piece of the running tool's output (kept bounded, rendered lazily)."""
        self._advance("output")
        self._output.append(data)
        self._tail_dirty = True
        return True

    def complete(
        self,
        result: str | bytes | None = None,
        *,
        raw_output: Any = None,
        content: Iterable[JsonObject] | None = None,
        locations: Iterable[JsonObject] | None = None,
    ) -> bool:
        """Success: ``content`` if given, else ``result`` capped, else the output capped.

        ``locations``, when given, replace those derived from the arguments (the tool
        knows more, e.g. the line an edit changed).
        """
        if content is not None:
            items = tuple(content)
        elif result is not None:
            items = (text_content(cap_text(result, self._output.result_bytes)),)
        else:
            items = self._result_content()
        found = None if locations is None else tuple(locations)
        return self._finish("complete", "completed", items, raw_output=raw_output, locations=found)

    def fail(self, error: str, *, raw_output: Any = None) -> bool:
        """Failure: the output so far (capped) and the error; ``rawOutput`` the error."""
        items = (*self._result_content(), text_content(error))
        raw = {"error": error} if raw_output is None else raw_output
        return self._finish("fail", "failed", items, raw_output=raw)

    def cancel(self) -> bool:
        """Cancelled (``session/cancel``): ends ``failed``, ``rawOutput`` says cancelled."""
        return self._finish(
            "cancel", "failed", self._result_content(), raw_output=dict(CANCELLED_OUTPUT)
        )

    # -- internals -------------------------------------------------------------------

    def _advance(self, action: Action) -> None:
        key = (self._stage, self._args, action)
        nxt = TRANSITIONS.get(key)
        if nxt is None:
            raise LifecycleError(
                f"tool call {self._state.tool_call_id}: cannot {action} in stage "
                f"{self._stage} (arguments {self._args})"
            )
        self._stage = nxt
        if action == "input":
            self._args = "final"

    def _describe(self) -> bool:
        found = describe(self.name, self._known, self._cwd, self._extra)
        old = self._state
        if (found.title, found.kind, found.locations) == (old.title, old.kind, old.locations):
            return False
        self._state = old.replace(title=found.title, kind=found.kind, locations=found.locations)
        return True

    def _result_content(self) -> tuple[JsonObject, ...]:
        if self._output.total:
            return (text_content(self._output.result_text()),)
        return self._state.content

    def _finish(
        self,
        action: Action,
        status: ToolCallStatus,
        content: tuple[JsonObject, ...],
        *,
        raw_output: Any = None,
        raw_input: Any = None,
        locations: tuple[JsonObject, ...] | None = None,
    ) -> bool:
        self._advance(action)
        self._tail_dirty = False
        changes: dict[str, Any] = {"status": status, "content": content}
        if locations:
            changes["locations"] = locations
        if raw_output is not None:
            changes["raw_output"] = raw_output
        if raw_input is not None and self._state.raw_input is None:
            changes["raw_input"] = raw_input
        self._state = self._state.replace(**changes)
        return True


__all__ = ["CANCELLED_OUTPUT", "TRANSITIONS", "Action", "Arguments", "Stage", "ToolCallLifecycle"]
